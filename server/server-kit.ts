import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { consoleEmail } from "../adapters/email/console/index.ts";
import { smtpEmail } from "../adapters/email/smtp/index.ts";
import { fsObjectStorage } from "../adapters/object-storage/fs/index.ts";
import { s3ObjectStorage } from "../adapters/object-storage/s3/index.ts";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { postgresStorage } from "../adapters/storage/postgres/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../plugins/accounts/index.ts";
import { appointmentsPlugin } from "../plugins/appointments/index.ts";
import { campaignsPlugin } from "../plugins/campaigns/index.ts";
import { catalogPlugin } from "../plugins/catalog/index.ts";
import { consolePlugin } from "../plugins/console/index.ts";
import { graphqlPlugin } from "../plugins/graphql/index.ts";
import { journeysPlugin } from "../plugins/journeys/index.ts";
import { legacyPlugin } from "../plugins/legacy/index.ts";
import { oauthPlugin } from "../plugins/oauth/index.ts";
import { privacyPlugin } from "../plugins/privacy/index.ts";
import { profilesPlugin } from "../plugins/profiles/index.ts";
import { sendRulesPlugin } from "../plugins/send-rules/index.ts";
import { subscriptionsPlugin } from "../plugins/subscriptions/index.ts";
import { webhooksPlugin } from "../plugins/webhooks/index.ts";
import { smsSenderOf, type SmsProvider } from "./sms-config.ts";
import {
  createReachkit,
  formatFields,
  type EmailSender,
  type Logger,
  type ObjectStorage,
  type Reachkit,
  type ReachkitConfigInput,
  type ReachkitPlugin,
  type StartOptions,
} from "../src/index.ts";
import { CONSOLE_DELIVERY, type DeliveryConfig, type EmailSetting, type ObjectStorageSetting } from "./delivery-config.ts";

/**
 * The self-hosted server's SQLite page cache: 4 MiB, not better-sqlite3's
 * 16 MiB. The server's peak memory during a catalog upload was about 12 MB
 * lower, and reads beyond the cache come from the operating system's file
 * cache (bench/catalog.ts).
 */
const SQLITE_CACHE_KIB = 4096;

/** Every plugin the self-hosted server runs. */
export function serverPlugins(options: { privacyProcessingDelayMs?: number; webhooksAllowPrivateTargets?: boolean } = {}): ReachkitPlugin[] {
  return [
    accountsPlugin(),
    subscriptionsPlugin(),
    graphqlPlugin(),
    oauthPlugin(),
    legacyPlugin(),
    privacyPlugin({ processingDelayMs: options.privacyProcessingDelayMs }),
    catalogPlugin(),
    appointmentsPlugin(),
    profilesPlugin(),
    sendRulesPlugin(),
    journeysPlugin(),
    campaignsPlugin(),
    consolePlugin(),
    webhooksPlugin({ allowPrivateTargets: options.webhooksAllowPrivateTargets ?? false }),
  ];
}

export interface ServerKitOptions {
  dataDir: string;
  /** PostgreSQL instead of the SQLite file in the data directory (several processes can share it). */
  databaseUrl?: string;
  publicUrl: string;
  secret: string;
  logger: Logger;
  config?: ReachkitConfigInput;
  /** How long after a privacy request its processing runs (default 0: at once). */
  privacyProcessingDelayMs?: number;
  /** Where texts go (default: printed on standard output). */
  sms?: SmsProvider;
  /** Where emails and objects go (default: printed emails, files in the data directory). */
  delivery?: DeliveryConfig;
  /** Deliver webhooks to private, loopback and link-local addresses too (REACHKIT_WEBHOOKS_ALLOW_PRIVATE). */
  webhooksAllowPrivateTargets?: boolean;
}

/**
 * The self-hosted kit: SQLite in the data directory (or PostgreSQL at
 * `databaseUrl`), node-schedule, SMS printed by default (a file, Twilio or an
 * SMPP gateway when configured), printed (or SMTP) email, files (or an S3
 * bucket) for objects.
 */
export function createServerKit(options: ServerKitOptions): Reachkit {
  mkdirSync(options.dataDir, { recursive: true });
  const delivery = options.delivery ?? CONSOLE_DELIVERY;
  return createReachkit({
    storage:
      options.databaseUrl === undefined
        ? sqliteStorage({ filename: join(options.dataDir, "reachkit.db"), cacheKiB: SQLITE_CACHE_KIB })
        : postgresStorage({ url: options.databaseUrl }),
    scheduler: nodeScheduleScheduler(),
    sms: smsSenderOf(options.sms ?? { kind: "console" }, options.publicUrl),
    email: emailSender(delivery.email),
    objectStorage: objectStorage(delivery.objectStorage, options),
    logger: options.logger,
    hosts: options.publicUrl,
    secret: options.secret,
    plugins: serverPlugins({ privacyProcessingDelayMs: options.privacyProcessingDelayMs, webhooksAllowPrivateTargets: options.webhooksAllowPrivateTargets }),
    config: delivery.emailFrom ? { ...options.config, messaging: { ...options.config?.messaging, emailFrom: delivery.emailFrom } } : options.config,
  });
}

function objectStorage(setting: ObjectStorageSetting, options: ServerKitOptions): ObjectStorage {
  if (setting.kind === "s3") {
    const { bucket, prefix, region, endpoint, credentials } = setting;
    return s3ObjectStorage({ bucket, prefix, region, ...(endpoint ? { endpoint } : {}), ...(credentials ? { credentials } : {}) });
  }
  return fsObjectStorage({ directory: join(options.dataDir, "objects"), baseUrl: options.publicUrl, secret: options.secret });
}

function emailSender(setting: EmailSetting): EmailSender {
  return setting.kind === "smtp" ? smtpEmail({ url: setting.url }) : consoleEmail();
}

/**
 * Creates and starts the self-hosted kit. On first start with an empty data
 * directory it creates a company and prints its credentials, so `/v1/me` works
 * at once. Not on PostgreSQL: several processes start on one database there,
 * and each would create one; `reachkit init` creates it once.
 */
export async function startServerKit(options: ServerKitOptions, print: (text: string) => void, startOptions: StartOptions = {}): Promise<Reachkit> {
  const firstStart = options.databaseUrl === undefined && !existsSync(join(options.dataDir, "reachkit.db"));
  const kit = createServerKit(options);
  await kit.start(startOptions);
  if (firstStart) {
    const { output } = await kit.provisionCompany({ name: "My Company" });
    print(`\nreachkit: first start, created a company.\n${formatFields(output)}\nThese credentials are shown once: store them now.\n\n`);
  }
  return kit;
}
