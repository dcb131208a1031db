import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { jsonLogger, type Reachkit } from "../../src/index.ts";
import type { ServerConfig } from "../../server/config.ts";
import { startServerKit } from "../../server/server-kit.ts";

/** Where the examples mount reachkit inside the host app: clients use `http://host:port/reachkit` as their base URL. */
export const REACHKIT_PREFIX = "/reachkit";

/** The host app's server, listening. */
export interface Listener {
  port: number;
  /** Stops accepting connections and resolves once the requests under way are answered. */
  close(): Promise<void>;
}

export interface RunningExample {
  kit: Reachkit;
  /** The host app's base URL. */
  url: string;
  /** Graceful: the host stops, then the kit (jobs finish, the database closes). */
  close(): Promise<void>;
}

/**
 * Starts the self-hosted kit (SQLite in the data directory, credentials printed
 * on first start) with its public URL under the prefix, then the host app
 * that `serve` builds around it.
 */
export async function startEmbedded(config: ServerConfig, serve: (kit: Reachkit) => Promise<Listener>, print: (text: string) => void): Promise<RunningExample> {
  const logger = jsonLogger({ level: config.logLevel });
  const publicUrl = `${config.publicUrl}${REACHKIT_PREFIX}`;
  const kit = await startServerKit({ dataDir: config.dataDir, publicUrl, secret: config.secret, logger }, print);
  const listener = await serve(kit);
  logger.info("listening", { port: listener.port, dataDir: config.dataDir, publicUrl });
  let closing: Promise<void> | undefined;
  return {
    kit,
    url: `http://127.0.0.1:${listener.port}`,
    close() {
      closing ??= (async () => {
        await listener.close();
        await kit.stop();
        logger.info("stopped");
      })();
      return closing;
    },
  };
}

/** Listens with a node:http server (Express apps are request listeners). */
export async function listenNode(server: Server, port: number): Promise<Listener> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const printToStdout = (text: string): void => void process.stdout.write(text);
