import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startExampleProcess, type ExampleProcess } from "../support/example-process.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const SERVER_ENTRY = "server/main.ts";

/** One text as the server's file SMS adapter logged it. */
export interface LoggedSms {
  to: string;
  body: string;
  idempotencyKey: string;
}

/**
 * The real self-hosted server (`npm start`'s entry point) on one temporary
 * data directory, started, killed with SIGKILL and started again as a child
 * process. Its texts go to a file (REACHKIT_SMS_LOG) that outlives every run.
 */
export class CrashableServer {
  readonly dataDir = temporaryDirectory("crash");
  readonly smsLog = join(this.dataDir, "sent-sms.jsonl");
  /** The API key and legacy token printed at the first start. */
  apiKey = "";
  legacyToken = "";
  /** The webhook signing key of the company's application, printed at the first start. */
  webhookSigningKey = "";
  /** The JSON log lines of the runs that ended, in order. */
  readonly logs: Array<Record<string, unknown>> = [];
  #current: ExampleProcess | undefined;

  constructor(private readonly env: Record<string, string> = {}) {}

  async start(): Promise<void> {
    if (this.#current) throw new Error("the server is running already");
    const started = await startExampleProcess(SERVER_ENTRY, {
      REACHKIT_DATA_DIR: this.dataDir,
      REACHKIT_SECRET: TEST_SECRET,
      REACHKIT_SMS_LOG: this.smsLog,
      ...this.env,
    });
    this.#current = started;
    this.apiKey ||= started.apiKey;
    this.legacyToken ||= /legacyToken:\s+(\S+)/.exec(started.printed)?.[1] ?? "";
    this.webhookSigningKey ||= /webhookSigningKey:\s+(\S+)/.exec(started.printed)?.[1] ?? "";
  }

  get url(): string {
    if (!this.#current) throw new Error("the server is not running");
    return `http://127.0.0.1:${this.#current.port}`;
  }

  /** SIGKILL: no graceful stop, no job given back, the database as the last commit left it. */
  async crash(): Promise<void> {
    await this.#end((process) => process.crash());
  }

  /** SIGTERM: the graceful stop. */
  async stop(): Promise<void> {
    await this.#end((process) => process.stop());
  }

  /** Whatever state the test is in: no child process outlives it. */
  async dispose(): Promise<void> {
    if (this.#current) await this.crash();
  }

  async #end(how: (process: ExampleProcess) => Promise<unknown>): Promise<void> {
    const current = this.#current;
    if (!current) return;
    this.#current = undefined;
    await how(current);
    this.logs.push(...current.logs);
  }

  /** Log lines of every finished run and of the current one. */
  allLogs(): Array<Record<string, unknown>> {
    return [...this.logs, ...(this.#current?.logs ?? [])];
  }

  /** A request with the API key (v1 routes) or a token of the caller's choice; the body as JSON when it is JSON. */
  async request(method: string, path: string, body?: unknown, token = this.apiKey): Promise<{ status: number; json: Json }> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let json: Json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  /** Every text the server sent, in every run, oldest first. */
  sentTexts(): LoggedSms[] {
    if (!existsSync(this.smsLog)) return [];
    const lines = readFileSync(this.smsLog, "utf8").split("\n");
    // The last piece is either empty or a line the server is still appending: read complete lines only.
    lines.pop();
    return lines
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { sms: LoggedSms }).sms);
  }
}

/** Real time passes (a restart after downtime); only the crash tests wait like this. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How many times each value occurs. */
export function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** A fixed-offset zone where it is mid-afternoon now, so quiet hours never hold marketing texts back whenever a test runs. */
export function afternoonZone(): string {
  const offset = 15 - new Date().getUTCHours();
  const hours = ((offset + 36) % 24) - 12;
  return hours === 0 ? "UTC" : `Etc/GMT${hours > 0 ? "-" : "+"}${Math.abs(hours)}`;
}
