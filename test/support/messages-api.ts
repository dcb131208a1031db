import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type twilioSdk from "twilio";

const twilio = createRequire(import.meta.url)("twilio") as typeof twilioSdk;

export const TEST_ACCOUNT_SID = `AC${"0".repeat(31)}1`;
export const TEST_AUTH_TOKEN = "test-auth-token-0123456789abcdef";

/** A message the server took, with the form fields it was posted with. */
export interface ApiMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  mediaUrls: string[];
  statusCallback?: string;
  status: string;
  createdAt: Date;
}

/** How the server answers one create instead of taking the message; `drop` takes it and closes the connection unanswered. */
export type ApiFailure = { status: number; code?: number; message?: string } | "drop";

/**
 * An HTTP server that answers like Twilio's Messages API (2010-04-01), for
 * tests and benchmarks: creates and lists messages with the account's basic
 * auth, answers scripted failures, and plays Twilio's part in status
 * callbacks and inbound webhooks, signed with the auth token as Twilio signs
 * them. Started by the tests on a local port.
 */
export class MessagesApi {
  readonly messages: ApiMessage[] = [];
  /** Every create request's form, in arrival order (refused ones too). */
  readonly createRequests: Array<Record<string, string | string[]>> = [];
  /** The headers of each create request, beside `createRequests`. */
  readonly createHeaders: IncomingHttpHeaders[] = [];
  readonly #failures: ApiFailure[] = [];
  readonly #refusedNumbers = new Map<string, ApiFailure>();
  #server: Server | undefined;
  #url = "";
  /** How long each create takes before its answer (the message is taken at once): a client killed meanwhile never learns it was sent. */
  answerDelayMs = 0;

  constructor(
    readonly accountSid = TEST_ACCOUNT_SID,
    readonly authToken = TEST_AUTH_TOKEN,
  ) {}

  get url(): string {
    return this.#url;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((request, response) => void this.#handle(request, response));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    this.#server = server;
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The next creates fail like this, in order. */
  failNext(...failures: ApiFailure[]): void {
    this.#failures.push(...failures);
  }

  /** Every create to this number fails like this (Twilio's answer for an invalid or opted-out number). */
  refuseNumber(to: string, failure: ApiFailure): void {
    this.#refusedNumbers.set(to, failure);
  }

  messagesTo(to: string): ApiMessage[] {
    return this.messages.filter((message) => message.to === to);
  }

  /** Twilio's status callback for a message: the form Twilio posts to its StatusCallback, signed. Returns the answer's status. */
  async reportStatus(sid: string, status: string, errorCode?: string, url?: string): Promise<number> {
    const message = this.messages.find((candidate) => candidate.sid === sid);
    const target = url ?? message?.statusCallback;
    if (!message || !target) throw new Error(`no message ${sid} with a status callback`);
    message.status = status;
    const params: Record<string, string> = {
      AccountSid: this.accountSid,
      ApiVersion: "2010-04-01",
      From: message.from,
      To: message.to,
      MessageSid: sid,
      SmsSid: sid,
      MessageStatus: status,
      SmsStatus: status,
      ...(errorCode !== undefined ? { ErrorCode: errorCode } : {}),
    };
    return (await this.postSigned(target, params)).status;
  }

  /** A subscriber's text as Twilio posts it to a number's messaging webhook, signed. */
  async sendInbound(url: string, text: { from: string; to: string; body: string }): Promise<{ status: number; json: unknown }> {
    return this.postSigned(url, this.inboundParams(text));
  }

  /** The form of a subscriber's text and its X-Twilio-Signature for a webhook URL. */
  inboundWebhookRequest(url: string, text: { from: string; to: string; body: string }) {
    const params = this.inboundParams(text);
    return { url, headers: { "x-twilio-signature": this.sign(url, params) }, params };
  }

  inboundParams(text: { from: string; to: string; body: string }): Record<string, string> {
    return {
      AccountSid: this.accountSid,
      ApiVersion: "2010-04-01",
      MessageSid: `SM${randomBytes(16).toString("hex")}`,
      From: text.from,
      To: text.to,
      Body: text.body,
      NumMedia: "0",
    };
  }

  /** The X-Twilio-Signature Twilio computes for a form posted to a URL. */
  sign(url: string, params: Record<string, string>): string {
    return twilio.getExpectedTwilioSignature(this.authToken, url, params);
  }

  /** Posts a form with the X-Twilio-Signature Twilio would compute for it (or the signature given). */
  async postSigned(url: string, params: Record<string, string>, signature = this.sign(url, params)): Promise<{ status: number; json: unknown }> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
      body: new URLSearchParams(params).toString(),
    });
    const text = await response.text();
    return { status: response.status, json: text === "" ? undefined : JSON.parse(text) };
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? "/", this.#url);
    const collection = `/2010-04-01/Accounts/${this.accountSid}/Messages.json`;
    const expectedAuth = `Basic ${Buffer.from(`${this.accountSid}:${this.authToken}`).toString("base64")}`;
    if (request.headers.authorization !== expectedAuth) {
      return send(response, 401, { code: 20003, message: "Authenticate", more_info: "https://www.twilio.com/docs/errors/20003", status: 401 });
    }
    if (url.pathname !== collection) return send(response, 404, { code: 20404, message: "The requested resource was not found", status: 404 });
    if (request.method === "GET") return this.#list(url, response);
    if (request.method !== "POST") return send(response, 405, { code: 20004, message: "Method not allowed", status: 405 });
    const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
    const fields: Record<string, string | string[]> = {};
    for (const key of new Set(form.keys())) fields[key] = form.getAll(key).length > 1 ? form.getAll(key) : form.get(key)!;
    this.createRequests.push(fields);
    this.createHeaders.push(request.headers);
    const to = form.get("To") ?? "";
    const failure = this.#failures.shift() ?? this.#refusedNumbers.get(to);
    if (failure !== undefined && failure !== "drop") {
      return send(response, failure.status, { code: failure.code ?? null, message: failure.message ?? "refused", more_info: "", status: failure.status });
    }
    if (!/^\+[1-9]\d{6,14}$/.test(to)) {
      return send(response, 400, { code: 21211, message: `The 'To' number ${to} is not a valid phone number.`, more_info: "", status: 400 });
    }
    const message: ApiMessage = {
      sid: `SM${randomBytes(16).toString("hex")}`,
      to,
      from: form.get("From") ?? "",
      body: form.get("Body") ?? "",
      mediaUrls: form.getAll("MediaUrl"),
      ...(form.get("StatusCallback") ? { statusCallback: form.get("StatusCallback")! } : {}),
      status: "queued",
      createdAt: new Date(),
    };
    this.messages.push(message);
    // Taken, but the answer is lost: the client cannot tell whether it was sent.
    if (failure === "drop") return void response.socket?.destroy();
    if (this.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.answerDelayMs));
    send(response, 201, this.#resource(message));
  }

  #list(url: URL, response: ServerResponse): void {
    const to = url.searchParams.get("To");
    const from = url.searchParams.get("From");
    const pageSize = Number(url.searchParams.get("PageSize") ?? 50);
    const found = this.messages.filter((message) => (to === null || message.to === to) && (from === null || message.from === from)).reverse();
    send(response, 200, {
      messages: found.slice(0, pageSize).map((message) => this.#resource(message)),
      first_page_uri: url.pathname,
      next_page_uri: null,
      previous_page_uri: null,
      page: 0,
      page_size: pageSize,
      uri: url.pathname,
    });
  }

  #resource(message: ApiMessage) {
    const date = message.createdAt.toUTCString().replace("GMT", "+0000");
    return {
      account_sid: this.accountSid,
      api_version: "2010-04-01",
      body: message.body,
      date_created: date,
      date_sent: null,
      date_updated: date,
      direction: "outbound-api",
      error_code: null,
      error_message: null,
      from: message.from,
      messaging_service_sid: null,
      num_media: String(message.mediaUrls.length),
      num_segments: "1",
      price: null,
      price_unit: "USD",
      sid: message.sid,
      status: message.status,
      subresource_uris: { media: `/2010-04-01/Accounts/${this.accountSid}/Messages/${message.sid}/Media.json` },
      to: message.to,
      uri: `/2010-04-01/Accounts/${this.accountSid}/Messages/${message.sid}.json`,
    };
  }
}

function send(response: ServerResponse, status: number, json: unknown): void {
  const body = JSON.stringify(json);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}
