export { nodeHandler, nodeHttpServer, type NodeHandler, type NodeHandlerOptions, type NodeHttpServer } from "./node-http.ts";
