import { mkdirSync } from "node:fs";
import type { Server } from "node:http";
import { createLimitedServer, nodeHandler } from "../adapters/http/node/index.ts";
import { jsonLogger, type Reachkit } from "../src/index.ts";
import type { ServerConfig } from "./config.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { limitHeapGrowth } from "./heap-growth.ts";
import { answerStarting, listenError, operationsRoute } from "./operations.ts";
import { startServerKit } from "./server-kit.ts";

export interface RunningServer {
  kit: Reachkit;
  server: Server;
  url: string;
  /** Graceful: stop accepting, finish requests and jobs, close the database. */
  close(): Promise<void>;
}

/**
 * Starts the self-hosted server. On first start with an empty data directory it
 * creates a company and prints its credentials, so `/v1/me` works at once.
 */
export async function startServer(config: ServerConfig, print: (text: string) => void = (t) => void process.stdout.write(t)): Promise<RunningServer> {
  const logger = jsonLogger({ level: config.logLevel });
  limitHeapGrowth();
  mkdirSync(config.dataDir, { recursive: true });
  // On SQLite the server owns its data directory: the lock makes it the only job runner of the database.
  // On PostgreSQL several processes share the database, and a dead one's jobs wait out their lease.
  const lock = config.databaseUrl === undefined ? lockDataDir(config.dataDir) : undefined;
  if (lock?.previousServerDied) logger.warn("the previous server of this data directory did not stop cleanly; recovering its work", { dataDir: config.dataDir });
  // Listen first: a start that cannot (the port is taken) ends before any database or company exists.
  let kit: Reachkit | undefined;
  let handle: ReturnType<typeof nodeHandler> | undefined;
  const server = createLimitedServer(config.limits, (request, response) => {
    const operation = operationsRoute(request);
    if (operation) {
      operation(response, kit).catch((error: unknown) => {
        logger.error("operations route failed", { error });
        response.destroy();
      });
      return;
    }
    if (handle) return handle(request, response);
    request.resume();
    answerStarting(response);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, () => resolve());
    });
  } catch (error) {
    lock?.release();
    throw listenError(error, config.port);
  }
  try {
    kit = await startServerKit(
      {
        dataDir: config.dataDir,
        databaseUrl: config.databaseUrl,
        publicUrl: config.publicUrl,
        secret: config.secret,
        logger,
        config: {
          rateLimits: config.rateLimits,
          messaging: { ratePerSecond: config.smsPerSecond, ratePerSecondBySender: config.smsRatesBySender },
          jobs: { concurrency: config.jobConcurrency, leaseMs: config.jobLeaseMs, pollMs: config.jobPollMs },
        },
        privacyProcessingDelayMs: config.privacyDelayHours * 3_600_000,
        webhooksAllowPrivateTargets: config.webhooksAllowPrivateTargets,
        sms: config.sms,
        delivery: config.delivery,
      },
      print,
      { soleJobRunner: lock !== undefined },
    );
  } catch (error) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    lock?.release();
    throw error;
  }
  // The process is the server's own: its CPU, memory and event loop go with the kit's metrics.
  kit.metrics.collectProcessMetrics();
  handle = nodeHandler(kit);
  const started = kit;
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  logger.info("listening", { port, dataDir: config.dataDir, storage: kit.storage.name, publicUrl: config.publicUrl });
  let closing: Promise<void> | undefined;
  return {
    kit: started,
    server,
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await started.stop();
        server.closeAllConnections();
        await closed;
        lock?.release();
        logger.info("stopped");
      })();
      return closing;
    },
  };
}
