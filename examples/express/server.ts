import { createServer } from "node:http";
import type { ServerConfig } from "../../server/config.ts";
import { listenNode, printToStdout, startEmbedded, type RunningExample } from "../shared/embedded.ts";
import { shopApp } from "./shop-app.ts";

/** The Express shop with reachkit embedded, listening on `config.port`. */
export function startExpressExample(config: ServerConfig, print = printToStdout): Promise<RunningExample> {
  return startEmbedded(config, (kit) => listenNode(createServer({ keepAliveTimeout: 5_000 }, shopApp(kit)), config.port), print);
}
