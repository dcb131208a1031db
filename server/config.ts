import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_SERVER_LIMITS, resolveServerLimits, type ServerLimits } from "../adapters/http/node/index.ts";
import { DEFAULT_JOB_SETTINGS, DEFAULT_MESSAGING_SETTINGS, isLogLevel, type LogLevel } from "../src/index.ts";
import { senderRatesFromEnv, smsProviderFromEnv, type SmsProvider } from "./sms-config.ts";
import { deliveryFromEnv, type DeliveryConfig } from "./delivery-config.ts";

/** The self-hosted server's settings, from the environment (see the README's configuration table). */
export interface ServerConfig {
  port: number;
  dataDir: string;
  publicUrl: string;
  secret: string;
  logLevel: LogLevel;
  /** Texts per second per sender number (the outbox's rate limit). */
  smsPerSecond: number;
  /** Texts per second of single sender numbers, over smsPerSecond (a short code sends faster than a long code). */
  smsRatesBySender: Record<string, number>;
  /** Where texts go. */
  sms: SmsProvider;
  /** Hours between a privacy request and its processing (0: at once; at most 720, thirty days). */
  privacyDelayHours: number;
  /** Durable jobs run at once (reminder bursts, sends). */
  jobConcurrency: number;
  /** Header size and count, header, request and keep-alive timeouts of the HTTP server. */
  limits: ServerLimits;
  /** Deliver webhooks to private, loopback, link-local and metadata addresses too (REACHKIT_WEBHOOKS_ALLOW_PRIVATE=true). */
  webhooksAllowPrivateTargets: boolean;
  /**
   * A PostgreSQL URL: the data lives there instead of the SQLite file in the
   * data directory, and several server processes can share it (docs/scaling.md).
   */
  databaseUrl?: string;
  /** How long a claimed job is held before another process may take it over (a process that died). */
  jobLeaseMs: number;
  /** With a shared database: how often each process looks for jobs other processes enqueued. */
  jobPollMs?: number;
  /**
   * Requests per second per token by route class, over the wire-compat
   * defaults. Counted per process: with N processes behind a balancer a
   * client gets up to N times these (docs/scaling.md says why).
   */
  rateLimits: Record<string, number>;
  /** Where emails and objects go (server/delivery-config.ts). */
  delivery: DeliveryConfig;
}

/** The environment variable of each server limit (see the README's configuration table). */
const LIMIT_VARIABLES: Readonly<Record<keyof ServerLimits, string>> = {
  maxHeaderSize: "REACHKIT_MAX_HEADER_BYTES",
  maxHeadersCount: "REACHKIT_MAX_HEADERS",
  headersTimeoutMs: "REACHKIT_HEADERS_TIMEOUT_MS",
  requestTimeoutMs: "REACHKIT_REQUEST_TIMEOUT_MS",
  keepAliveTimeoutMs: "REACHKIT_KEEP_ALIVE_TIMEOUT_MS",
};

function limitsFromEnv(env: NodeJS.ProcessEnv): ServerLimits {
  const limits: Partial<Record<keyof ServerLimits, number>> = {};
  for (const [name, variable] of Object.entries(LIMIT_VARIABLES) as [keyof ServerLimits, string][]) {
    if (env[variable]) limits[name] = wholeNumberFromEnv(env, variable, 0, 1);
  }
  try {
    return resolveServerLimits({ ...DEFAULT_SERVER_LIMITS, ...limits });
  } catch {
    throw new Error(`${LIMIT_VARIABLES.headersTimeoutMs} must not exceed ${LIMIT_VARIABLES.requestTimeoutMs}`);
  }
}

/** `REACHKIT_RATE_LIMITS=opt-in=20,default=300`: route class = requests per second ("unlimited" lifts one). */
function rateLimitsFromEnv(text: string | undefined): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const entry of (text ?? "").split(",").map((e) => e.trim()).filter(Boolean)) {
    const [routeClass, value] = entry.split("=").map((part) => part?.trim());
    const limit = value === "unlimited" ? Infinity : Number(value);
    if (!routeClass || !(limit > 0)) {
      throw new Error(`REACHKIT_RATE_LIMITS must be comma-separated class=requests-per-second pairs (e.g. opt-in=20,default=300), got "${text}"`);
    }
    limits[routeClass] = limit;
  }
  return limits;
}

/** A whole number from the environment (at least `minimum`), or `fallback` when the variable is unset or empty. */
function wholeNumberFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number): number {
  const text = env[name];
  const value = text ? Number(text) : fallback;
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number of at least ${minimum}, got "${text}"`);
  return value;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: { port?: number; dataDir?: string } = {}): ServerConfig {
  const port = overrides.port ?? (env.PORT ? Number(env.PORT) : 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got "${env.PORT}"`);
  const dataDir = resolve(overrides.dataDir ?? env.REACHKIT_DATA_DIR ?? "./data");
  const logLevel = env.LOG_LEVEL ?? "info";
  if (!isLogLevel(logLevel)) throw new Error(`LOG_LEVEL must be debug, info, warn or error, got "${logLevel}"`);
  const smsPerSecond = env.REACHKIT_SMS_PER_SECOND ? Number(env.REACHKIT_SMS_PER_SECOND) : DEFAULT_MESSAGING_SETTINGS.ratePerSecond;
  if (!(smsPerSecond > 0)) throw new Error(`REACHKIT_SMS_PER_SECOND must be a positive number, got "${env.REACHKIT_SMS_PER_SECOND}"`);
  const privacyDelayHours = env.REACHKIT_PRIVACY_DELAY_HOURS ? Number(env.REACHKIT_PRIVACY_DELAY_HOURS) : 0;
  if (!(privacyDelayHours >= 0 && privacyDelayHours <= 720)) {
    throw new Error(`REACHKIT_PRIVACY_DELAY_HOURS must be a number of hours from 0 to 720 (thirty days), got "${env.REACHKIT_PRIVACY_DELAY_HOURS}"`);
  }
  const jobConcurrency = wholeNumberFromEnv(env, "REACHKIT_JOB_CONCURRENCY", DEFAULT_JOB_SETTINGS.concurrency, 1);
  const databaseUrl = env.REACHKIT_DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(`REACHKIT_DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:port/database), got "${databaseUrl}"`);
  }
  return {
    port,
    dataDir,
    databaseUrl,
    rateLimits: rateLimitsFromEnv(env.REACHKIT_RATE_LIMITS),
    jobLeaseMs: wholeNumberFromEnv(env, "REACHKIT_JOB_LEASE_MS", DEFAULT_JOB_SETTINGS.leaseMs, 1_000),
    jobPollMs: databaseUrl === undefined ? undefined : wholeNumberFromEnv(env, "REACHKIT_JOB_POLL_MS", 1_000, 50),
    publicUrl: publicUrlFromEnv(env, port),
    secret: env.REACHKIT_SECRET || dataDirSecret(dataDir),
    logLevel,
    smsPerSecond,
    smsRatesBySender: senderRatesFromEnv(env.REACHKIT_SMS_RATES),
    sms: smsProviderFromEnv(env),
    privacyDelayHours,
    jobConcurrency,
    limits: limitsFromEnv(env),
    delivery: deliveryFromEnv(env),
    webhooksAllowPrivateTargets: webhooksAllowPrivateFromEnv(env),
  };
}

/** `REACHKIT_WEBHOOKS_ALLOW_PRIVATE`: `true` lets webhooks reach private addresses; unset or `false` keeps them public only. */
export function webhooksAllowPrivateFromEnv(env: NodeJS.ProcessEnv): boolean {
  const text = env.REACHKIT_WEBHOOKS_ALLOW_PRIVATE;
  if (text === undefined || text === "" || text === "false") return false;
  if (text === "true") return true;
  throw new Error(`REACHKIT_WEBHOOKS_ALLOW_PRIVATE must be true or false, got "${text}"`);
}

/**
 * The URL clients reach the server at: `REACHKIT_PUBLIC_URL`, else
 * `http://localhost:$PORT`. Every URL the server and the CLI print starts with it.
 */
export function publicUrlFromEnv(env: NodeJS.ProcessEnv, port: number = env.PORT ? Number(env.PORT) : 3000): string {
  return (env.REACHKIT_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, "");
}

/** The secret kept in the data directory, generated on first use (mode 0600). */
export function dataDirSecret(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "secret");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
  return readFileSync(file, "utf8").trim();
}
