import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "node:test";
import { accountsPlugin } from "../../../plugins/accounts/index.ts";
import { subscriptionsPlugin } from "../../../plugins/subscriptions/index.ts";
import { DeliveryRows } from "../../../plugins/webhooks/delivery-rows.ts";
import { FirstAttempts } from "../../../plugins/webhooks/first-attempts.ts";
import { OutcomePages } from "../../../plugins/webhooks/outcome-pages.ts";
import { webhooksPlugin, type DeliveryRecord, type OutcomePage, type WebhooksPluginOptions } from "../../../plugins/webhooks/index.ts";
import type { ReachkitPlugin } from "../../../src/index.ts";
import { startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  json: Json;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> };

/**
 * A real HTTP server on 127.0.0.1 that records every POST. By default it
 * answers as the reference's demo app does: it checks `x-attentive-hmac-sha256`
 * (hex HMAC-SHA256 of the raw body with the signing key) and answers 403 on a
 * mismatch, 200 `{"status":"success"}` otherwise.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  #server: Server | undefined;
  /** Replaces the demo's answer; may wait (a slow receiver). */
  answer: ((request: ReceivedRequest) => Answer | Promise<Answer>) | undefined;

  constructor(public signingKey = "") {}

  static async start(signingKey = ""): Promise<Receiver> {
    const receiver = new Receiver(signingKey);
    await receiver.#listen();
    return receiver;
  }

  /** Holds every answer (200) until `release` is called; `arrived` settles once the first request is in. */
  holdAnswers(): { arrived: Promise<void>; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    this.answer = async () => {
      arrive();
      await released;
      return { status: 200 };
    };
    return { arrived, release };
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}/hooks`;
  }

  /** The demo app's check. */
  hmacMatches(request: ReceivedRequest): boolean {
    const expected = createHmac("sha256", this.signingKey).update(request.body).digest("hex");
    const given = String(request.headers["x-attentive-hmac-sha256"] ?? "");
    return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  }

  #listen(): Promise<void> {
    this.#server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", async () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: Json;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request = { headers: incoming.headers, body, json };
        this.requests.push(request);
        const answer = this.answer ? await this.answer(request) : this.hmacMatches(request) ? { status: 200, body: '{"status":"success"}' } : { status: 403, body: "Forbidden" };
        outgoing.writeHead(answer.status, { "content-type": "application/json", ...answer.headers }).end(answer.body ?? "");
      });
    });
    return new Promise((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

/**
 * Starts a test file's receivers (the function it answers), each closed after its test once `stopKit` has
 * stopped the test's kit: the kit first, so its drains stop sending and abort a request a receiver holds,
 * rather than see the receiver go away under them.
 */
export function receiversClosedAfterEach(stopKit: () => Promise<void>): (signingKey?: string) => Promise<Receiver> {
  const started: Receiver[] = [];
  afterEach(async () => {
    await stopKit();
    for (const receiver of started.splice(0)) {
      receiver.answer = undefined;
      await receiver.close();
    }
  });
  return async (signingKey) => {
    const receiver = await Receiver.start(signingKey);
    started.push(receiver);
    return receiver;
  };
}

export interface WebhookKit extends TestKit {
  /** The signing key of the company's default application, from the provisioning output. */
  signingKey: string;
  createWebhook(url: string, events: string[], token?: string): Promise<Json>;
  deliveries(): Promise<DeliveryRecord[]>;
}

/** A test kit with the accounts, subscriptions and webhooks plugins (private targets allowed: receivers are on 127.0.0.1). */
export async function startWebhookKit(options: { webhooks?: WebhooksPluginOptions; plugins?: ReachkitPlugin[] } & Omit<TestKitOptions, "plugins"> = {}): Promise<WebhookKit> {
  const { webhooks, plugins, ...rest } = options;
  const t = await startTestKit({
    ...rest,
    plugins: [accountsPlugin(), subscriptionsPlugin(), webhooksPlugin({ allowPrivateTargets: true, ...webhooks }), ...(plugins ?? [])],
    config: { rateLimits: { default: Infinity, "opt-in": Infinity, unsubscribe: Infinity }, ...rest.config },
  });
  return {
    ...t,
    signingKey: (t.company as Json).webhookSigningKey,
    async createWebhook(url, events, token) {
      const response = await t.request({ method: "POST", url: "/v1/webhooks", body: { url, events }, ...(token ? { token } : {}) });
      if (response.status !== 201) throw new Error(`create webhook: ${response.status} ${response.body}`);
      return t.json(response);
    },
    async deliveries() {
      const rows = new DeliveryRows(t.kit.storage, new OutcomePages(t.kit.storage), new FirstAttempts(t.kit.storage));
      return rows.shown((await rows.deliveries.find({ orderBy: [{ field: "id" }] })).items);
    },
  };
}

/** The ids of the deliveries an outcome page holds, in either of its forms (columns, or an object a delivery). */
export const pagedIds = (page: Partial<OutcomePage>): string[] => ("outcomes" in page ? page.outcomes!.map((outcome) => outcome.id) : ((page as { ids?: string[] }).ids ?? []));

export const singleOptIn = (phone: string, extra: Json = {}) => ({
  user: { phone, ...extra },
  locale: { language: "en", country: "US" },
  subscriptionType: "MARKETING",
  singleOptIn: true,
});
