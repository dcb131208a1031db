import type { AddressInfo } from "node:net";
import type { ServerConfig } from "../../server/config.ts";
import { printToStdout, startEmbedded, type RunningExample } from "../shared/embedded.ts";
import { shopApp } from "./shop-app.ts";

/** The Fastify shop with reachkit embedded, listening on localhost at `config.port`. */
export function startFastifyExample(config: ServerConfig, print = printToStdout): Promise<RunningExample> {
  return startEmbedded(
    config,
    async (kit) => {
      const app = await shopApp(kit);
      await app.listen({ port: config.port });
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
    },
    print,
  );
}
