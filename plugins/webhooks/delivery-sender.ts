import { Agent, errors, type Dispatcher } from "undici";
import { inject, injectable } from "../../src/index.ts";
import { checkLiteralTarget, guardedLookup, RefusedTargetError } from "./target-policy.ts";
import { WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";

/** The start of a receiver's answer kept in the delivery log. */
export const RESPONSE_BODY_KEPT = 1024;
/** An answer longer than this is not read to its end: the connection is dropped instead. */
const RESPONSE_BODY_READ = 64 * 1024;

/** What every delivery's request says of itself besides the headers it is given (these two win over a given one of the same name). */
const SENDER_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json", "user-agent": "reachkit-webhooks" };

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
 * Redirects are not followed (the agent's `maxRedirections` is 0): a 3xx is a
 * failed attempt. The kit's stop ends the requests out by destroying that agent
 * (a new one takes its place).
 *
 * Its members are TypeScript-`private`, not `#private`: tsx turns those of a decorated class into WeakMap lookups.
 */
@injectable()
export class DeliverySender {
  private agent: Agent;
  private readonly targets = new Map<string, Target>();
  /** The stop signal that ends the requests out: one listener for them all (one per request cost each its own). */
  private watched: AbortSignal | undefined;

  constructor(@inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings) {
    this.agent = this.newAgent();
  }

  /**
   * One attempt; never throws or rejects for what the receiver or the network did. The
   * connection, the answer's headers and its body must each come within
   * `attemptTimeoutMs` (the agent's timeouts). `stop` aborts it, and every
   * other request out (the kit is stopping); once aborted, nothing leaves.
   *
   * Dispatched with a handler of its own rather than through undici's `request`: its answer's status and start,
   * without the response's headers parsed, a stream made and read, and an async resource (2-3 µs of CPU a request
   * less, the two senders alternated in one process against the bench's receivers). That handler settles the
   * attempt's one promise with its result: no async function around it, whose promise and await were two more a
   * delivery.
   */
  post(url: string, body: string, headers: Record<string, string>, stop?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const timeoutMs = this.settings.attemptTimeoutMs;
    try {
      if (stop !== undefined) this.watch(stop);
      const target = this.target(url);
      if (target.refused) throw target.refused;
      return new Promise((resolve) => {
        const reader = new AnswerReader(started, timeoutMs, resolve);
        // Not `{ ...headers, "content-type": … }`: a spread followed by more properties made each request's headers cost 3-4 µs of CPU.
        this.agent.dispatch({ origin: target.origin, path: target.path, method: "POST", body, headers: Object.assign({}, headers, SENDER_HEADERS) }, reader);
      });
    } catch (error) {
      return Promise.resolve(unanswered(started, error, timeoutMs));
    }
  }

  /** Throws if `stop` was aborted; otherwise its abort will interrupt the requests out. */
  private watch(stop: AbortSignal): void {
    if (stop.aborted) throw new errors.RequestAbortedError();
    if (stop === this.watched) return;
    this.watched = stop;
    stop.addEventListener("abort", () => this.interrupt(), { once: true });
  }

  /** Ends every request out at once: their agent is destroyed, and a new one sends from now on (after a restart, the CLI's). */
  private interrupt(): void {
    const interrupted = this.agent;
    this.agent = this.newAgent();
    interrupted.destroy(new errors.RequestAbortedError()).catch(() => {
      // Its requests have their own errors (their attempts' outcomes); a destroy fails only if already destroyed.
    });
  }

  private newAgent(): Agent {
    return new Agent({
      connect: { lookup: guardedLookup(this.settings.allowPrivateTargets), timeout: this.settings.attemptTimeoutMs },
      connections: this.settings.concurrencyPerReceiver,
      maxRedirections: 0,
      headersTimeout: this.settings.attemptTimeoutMs,
      bodyTimeout: this.settings.attemptTimeoutMs,
    });
  }

  /** A receiver's origin and path, and whether its literal address is refused: worked out once per URL rather than at every request. */
  private target(url: string): Target {
    let target = this.targets.get(url);
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
      if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const latencySince = (started: number) => Math.round(performance.now() - started);

/** An attempt that got no answer to read (a refused address, a timeout, a network error, the kit's stop): why. */
const unanswered = (started: number, error: unknown, timeoutMs: number): AttemptResult => ({ delivered: false, latencyMs: latencySince(started), error: describe(error, timeoutMs) });

/**
 * Reads an answer as undici's dispatcher hands it over, and settles its attempt: its status, and its body's first
 * RESPONSE_BODY_KEPT bytes, read to its end when it is short (so the connection stays open). An answer longer than
 * RESPONSE_BODY_READ is cut off (its connection dropped) and answered with its start.
 */
class AnswerReader implements Dispatcher.DispatchHandlers {
  private status = 0;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private read = 0;
  private cutOff = false;
  private abort: ((error: Error) => void) | undefined;

  constructor(
    private readonly started: number,
    private readonly timeoutMs: number,
    private readonly settle: (result: AttemptResult) => void,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(statusCode: number): boolean {
    // An informational answer (1xx) comes before the final one.
    if (statusCode >= 200) this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.keptBytes < RESPONSE_BODY_KEPT) {
      const room = RESPONSE_BODY_KEPT - this.keptBytes;
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.read += chunk.length;
    if (this.read <= RESPONSE_BODY_READ) return true;
    this.cutOff = true;
    this.abort?.(new Error("the answer is longer than the kit reads"));
    return false;
  }

  onComplete(): void {
    this.answered();
  }

  onError(error: Error): void {
    if (this.cutOff) this.answered();
    else this.settle(unanswered(this.started, error, this.timeoutMs));
  }

  private answered(): void {
    const { status } = this;
    const latencyMs = latencySince(this.started);
    const responseBody = this.start();
    if (status >= 200 && status < 300) this.settle({ delivered: true, status, latencyMs, responseBody });
    else this.settle({ delivered: false, status, latencyMs, responseBody, error: `the receiver answered ${status}` });
  }

  private start(): string {
    return this.kept.length === 1 ? this.kept[0]!.toString("utf8") : Buffer.concat(this.kept).toString("utf8");
  }
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
