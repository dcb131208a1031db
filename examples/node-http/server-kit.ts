import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fsObjectStorage } from "../../adapters/object-storage/fs/index.ts";
import { consoleSms } from "../../adapters/sms/console/index.ts";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../../plugins/accounts/index.ts";
import { catalogPlugin } from "../../plugins/catalog/index.ts";
import { subscriptionsPlugin } from "../../plugins/subscriptions/index.ts";
import { createReachkit, type Logger, type Reachkit, type ReachkitConfigInput, type ReachkitPlugin } from "../../src/index.ts";

/** Every plugin the self-hosted server runs. */
export function serverPlugins(): ReachkitPlugin[] {
  return [accountsPlugin(), subscriptionsPlugin(), catalogPlugin()];
}

export interface ServerKitOptions {
  dataDir: string;
  publicUrl: string;
  secret: string;
  logger: Logger;
  config?: ReachkitConfigInput;
}

/** The self-hosted kit: SQLite in the data directory, node-schedule, console SMS, files for objects. */
export function createServerKit(options: ServerKitOptions): Reachkit {
  mkdirSync(options.dataDir, { recursive: true });
  return createReachkit({
    storage: sqliteStorage({ filename: join(options.dataDir, "reachkit.db") }),
    scheduler: nodeScheduleScheduler(),
    sms: consoleSms(),
    objectStorage: fsObjectStorage({ directory: join(options.dataDir, "objects"), baseUrl: options.publicUrl, secret: options.secret }),
    logger: options.logger,
    hosts: options.publicUrl,
    secret: options.secret,
    plugins: serverPlugins(),
    config: options.config,
  });
}
