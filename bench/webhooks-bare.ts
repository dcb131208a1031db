// The bare loop of bench/webhooks.ts: the HTTP work of the kit's webhook deliveries by the fastest plain means.
import { createHmac, createSecretKey } from "node:crypto";
import { Agent, type Dispatcher } from "undici";

/** The bare loop's signing key, as the kit's HMACs take one: its text (the hex header) and its bytes (Standard Webhooks). */
const BARE_KEY = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const bareHmacKeys = { asText: createSecretKey(Buffer.from(BARE_KEY, "utf8")), bytes: createSecretKey(Buffer.from(BARE_KEY.slice("whsec_".length), "base64")) };

/** The headers the kit's webhook sender sends with a delivery (plugins/webhooks: delivery-sender.ts, signing.ts), by plain node:crypto. */
export function signedHeaders(id: string, body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    "content-type": "application/json",
    "user-agent": "reachkit-webhooks",
    "x-attentive-hmac-sha256": createHmac("sha256", bareHmacKeys.asText).update(body).digest("hex"),
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${createHmac("sha256", bareHmacKeys.bytes).update(`${id}.${timestamp}.${body}`).digest("base64")}`,
  };
}

/**
 * Every body POSTed to every receiver, signed as the kit signs it (a delivery id as long as the kit's), `concurrency`
 * at once per receiver, through an agent set up as reachkit's, called as its sender calls it: the agent's own
 * `dispatch` with the origin and path worked out once, and a handler that reads the answer to its end (undici's
 * `request` and `body.text()`, which the kit's sender called before, took 2-3 µs more of CPU a request; its
 * top-level `request(url)` about a third more again). Its time and CPU.
 */
export async function bareDeliveries(urls: readonly string[], events: number, concurrency: number, body: (n: number) => string): Promise<{ seconds: number; cpuMicros: number }> {
  const agent = new Agent({ connections: concurrency, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    urls.flatMap((url, receiver) => {
      const { origin, pathname: path } = new URL(url);
      return Array.from({ length: concurrency }, async (_, worker) => {
        for (let n = worker; n < events; n += concurrency) {
          const payload = body(n);
          const id = `${receiver}`.padEnd(25 - String(n).length, "0") + n;
          await new Promise<string>((resolve, reject) =>
            agent.dispatch({ origin, path, method: "POST", body: payload, headers: signedHeaders(id, payload) }, new BareAnswer(resolve, reject)),
          );
        }
      });
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await agent.close();
  return { seconds, cpuMicros: used.user + used.system };
}

/** An answer read to its end, as the bare loop's `dispatch` hands it over. */
class BareAnswer implements Dispatcher.DispatchHandlers {
  readonly #chunks: Buffer[] = [];

  constructor(
    private readonly resolve: (text: string) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  onConnect(): void {}

  onHeaders(): boolean {
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.resolve(Buffer.concat(this.#chunks).toString("utf8"));
  }

  onError(error: Error): void {
    this.reject(error);
  }
}
