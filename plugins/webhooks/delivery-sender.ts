import type { Readable } from "node:stream";
import { Agent, errors } from "undici";
import { inject, injectable } from "../../src/index.ts";
import { checkLiteralTarget, guardedLookup, RefusedTargetError } from "./target-policy.ts";
import { WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";

/** The start of a receiver's answer kept in the delivery log. */
export const RESPONSE_BODY_KEPT = 1024;
/** An answer longer than this is not read to its end: the connection is dropped instead. */
const RESPONSE_BODY_READ = 64 * 1024;

/** Receivers' URLs worked out (DeliverySender's targets): a process's webhooks, forgotten all at once past this many. */
const TARGETS_KEPT = 10_000;

interface Target {
  origin: string;
  path: string;
  /** Why its literal address is refused, if it is. */
  refused?: RefusedTargetError;
}

/** What one attempt got. */
export interface AttemptResult {
  /** A 2xx answer. */
  delivered: boolean;
  status?: number;
  latencyMs: number;
  responseBody?: string;
  /** Why it did not deliver: a status, a timeout, a refused address, a network error. */
  error?: string;
}

/**
 * POSTs deliveries with undici, through one agent whose connections resolve
 * names with the target policy's lookup (checked at connect time, so DNS
 * rebinding is caught) and keep alive between deliveries to one receiver.
 * Redirects are not followed: a 3xx is a failed attempt. The kit's stop ends
 * the requests out by destroying that agent (a new one takes its place).
 */
@injectable()
export class DeliverySender {
  #agent: Agent;
  readonly #targets = new Map<string, Target>();
  /** The stop signal that ends the requests out: one listener for them all (one per request cost each its own). */
  #watched: AbortSignal | undefined;

  constructor(@inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings) {
    this.#agent = this.#newAgent();
  }

  /**
   * One attempt; never throws for what the receiver or the network did. The
   * connection, the answer's headers and its body must each come within
   * `attemptTimeoutMs` (the agent's timeouts). `stop` aborts it, and every
   * other request out (the kit is stopping); once aborted, nothing leaves.
   */
  async post(url: string, body: string, headers: Record<string, string>, stop?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    try {
      if (stop !== undefined) this.#watch(stop);
      const target = this.#target(url);
      if (target.refused) throw target.refused;
      const answer = await this.#agent.request({
        origin: target.origin,
        path: target.path,
        method: "POST",
        body,
        headers: { "content-type": "application/json", "user-agent": "reachkit-webhooks", ...headers },
        maxRedirections: 0,
      });
      const responseBody = await readStart(answer.body);
      const delivered = answer.statusCode >= 200 && answer.statusCode < 300;
      return { delivered, status: answer.statusCode, latencyMs: latencySince(started), responseBody, ...(delivered ? {} : { error: `the receiver answered ${answer.statusCode}` }) };
    } catch (error) {
      return { delivered: false, latencyMs: latencySince(started), error: describe(error, this.settings.attemptTimeoutMs) };
    }
  }

  /** Throws if `stop` was aborted; otherwise its abort will interrupt the requests out. */
  #watch(stop: AbortSignal): void {
    if (stop.aborted) throw new errors.RequestAbortedError();
    if (stop === this.#watched) return;
    this.#watched = stop;
    stop.addEventListener("abort", () => this.#interrupt(), { once: true });
  }

  /** Ends every request out at once: their agent is destroyed, and a new one sends from now on (after a restart, the CLI's). */
  #interrupt(): void {
    const interrupted = this.#agent;
    this.#agent = this.#newAgent();
    interrupted.destroy(new errors.RequestAbortedError()).catch(() => {
      // Its requests have their own errors (their attempts' outcomes); a destroy fails only if already destroyed.
    });
  }

  #newAgent(): Agent {
    return new Agent({
      connect: { lookup: guardedLookup(this.settings.allowPrivateTargets), timeout: this.settings.attemptTimeoutMs },
      connections: this.settings.concurrencyPerReceiver,
      headersTimeout: this.settings.attemptTimeoutMs,
      bodyTimeout: this.settings.attemptTimeoutMs,
    });
  }

  /** A receiver's origin and path, and whether its literal address is refused: worked out once per URL rather than at every request. */
  #target(url: string): Target {
    let target = this.#targets.get(url);
    if (target === undefined) {
      let refused: RefusedTargetError | undefined;
      try {
        checkLiteralTarget(url, this.settings.allowPrivateTargets);
      } catch (error) {
        if (!(error instanceof RefusedTargetError)) throw error;
        refused = error;
      }
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, refused };
      if (this.#targets.size >= TARGETS_KEPT) this.#targets.clear();
      this.#targets.set(url, target);
    }
    return target;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

const latencySince = (started: number) => Math.round(performance.now() - started);

/**
 * The first RESPONSE_BODY_KEPT bytes of an answer, read to its end when it is short (so the connection stays open).
 * Read through its data events: an async iterator over it cost 2.9% of the delivery phase's CPU samples (bench/webhooks.ts).
 * Its callbacks are inline: a named closure made per call costs tsx's `__name` helper (~3 µs a delivery there).
 */
function readStart(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let read = 0;
    body.on("data", (chunk: Buffer) => {
      if (keptBytes < RESPONSE_BODY_KEPT) {
        kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
        keptBytes += Math.min(chunk.length, RESPONSE_BODY_KEPT - keptBytes);
      }
      read += chunk.length;
      if (read > RESPONSE_BODY_READ) {
        body.destroy();
        resolve(Buffer.concat(kept).toString("utf8"));
      }
    });
    body.on("end", () => resolve(Buffer.concat(kept).toString("utf8")));
    body.on("error", reject);
  });
}

function describe(error: unknown, timeoutMs: number): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof RefusedTargetError) return `refused target: ${cause.message}`;
  if (error instanceof Error && error.name === "AbortError") return "the kit stopped during the attempt";
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (typeof code === "string" && (code.startsWith("UND_ERR_HEADERS_TIMEOUT") || code.startsWith("UND_ERR_BODY_TIMEOUT") || code === "UND_ERR_CONNECT_TIMEOUT")) {
    return `no answer within ${timeoutMs} ms`;
  }
  return typeof code === "string" ? `${code}: ${message}` : message;
}
