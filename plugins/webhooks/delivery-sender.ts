import { Agent, request } from "undici";
import { inject, injectable } from "../../src/index.ts";
import { checkLiteralTarget, guardedLookup, RefusedTargetError } from "./target-policy.ts";
import { WEBHOOKS_SETTINGS, type WebhooksSettings } from "./tokens.ts";

/** The start of a receiver's answer kept in the delivery log. */
export const RESPONSE_BODY_KEPT = 1024;
/** An answer longer than this is not read to its end: the connection is dropped instead. */
const RESPONSE_BODY_READ = 64 * 1024;

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
 * Redirects are not followed: a 3xx is a failed attempt.
 */
@injectable()
export class DeliverySender {
  private readonly agent: Agent;

  constructor(@inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(settings.allowPrivateTargets), timeout: settings.attemptTimeoutMs },
      connections: settings.concurrencyPerReceiver,
      headersTimeout: settings.attemptTimeoutMs,
      bodyTimeout: settings.attemptTimeoutMs,
    });
  }

  /**
   * One attempt; never throws for what the receiver or the network did. The
   * connection, the answer's headers and its body must each come within
   * `attemptTimeoutMs` (the agent's timeouts). `stop` aborts it (the kit is stopping).
   */
  async post(url: string, body: string, headers: Record<string, string>, stop?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      checkLiteralTarget(url, this.settings.allowPrivateTargets);
      const answer = await request(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "user-agent": "reachkit-webhooks", ...headers },
        dispatcher: this.agent,
        maxRedirections: 0,
        ...(stop ? { signal: stop } : {}),
      });
      const responseBody = await readStart(answer.body, answer.headers["content-length"]);
      const delivered = answer.statusCode >= 200 && answer.statusCode < 300;
      return { delivered, status: answer.statusCode, latencyMs: latency(), responseBody, ...(delivered ? {} : { error: `the receiver answered ${answer.statusCode}` }) };
    } catch (error) {
      return { delivered: false, latencyMs: latency(), error: describe(error, this.settings.attemptTimeoutMs) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/**
 * The first RESPONSE_BODY_KEPT bytes of an answer, read to its end when it is short (so the connection stays open).
 * An answer that says it is short is read whole at once: reading it through an async iterator cost about a
 * tenth of the HTTP client's CPU per delivery.
 */
async function readStart(body: AsyncIterable<Buffer> & { destroy(): void; arrayBuffer(): Promise<ArrayBuffer> }, contentLength: string | string[] | undefined): Promise<string> {
  if (typeof contentLength === "string" && Number(contentLength) <= RESPONSE_BODY_READ) {
    return Buffer.from(await body.arrayBuffer()).subarray(0, RESPONSE_BODY_KEPT).toString("utf8");
  }
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let read = 0;
  for await (const chunk of body) {
    if (keptBytes < RESPONSE_BODY_KEPT) {
      kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
      keptBytes += Math.min(chunk.length, RESPONSE_BODY_KEPT - keptBytes);
    }
    read += chunk.length;
    if (read > RESPONSE_BODY_READ) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(kept).toString("utf8");
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
