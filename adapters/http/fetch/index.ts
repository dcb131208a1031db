export { fetchHandler, type FetchHandler, type FetchHandlerOptions, type FetchNext } from "./fetch-handler.ts";
export type { FetchRequestInfo } from "../../../src/index.ts";
