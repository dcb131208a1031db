export {
  nodeHandler,
  nodeHttpServer,
  type NodeHandler,
  type NodeHandlerOptions,
  type NodeHttpServer,
  type NodeHttpServerOptions,
} from "./node-http.ts";
export { createLimitedServer, DEFAULT_SERVER_LIMITS, resolveServerLimits, type ServerLimits } from "./server-limits.ts";
