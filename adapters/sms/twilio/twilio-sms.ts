import { createRequire } from "node:module";
import type twilioSdk from "twilio";
import * as v from "valibot";
import {
  defineRoute,
  forbidden,
  formBody,
  reply,
  type AnyRoute,
  type DeliveryReceipt,
  type InboundWebhookRequest,
  type OutboundSms,
  type RouteDocs,
  type SentSms,
  type SmsSender,
  SmsSendError,
} from "../../../src/index.ts";
import { isOptedOutCode, reportedStatusOf, sendErrorOf } from "./twilio-errors.ts";

type TwilioSdk = typeof twilioSdk;
type TwilioClient = ReturnType<TwilioSdk>;
type RequestClient = InstanceType<TwilioSdk["RequestClient"]>;

/** The kit's route for Twilio's status callbacks; each message's callback URL ends with its outbox id. */
export const TWILIO_STATUS_PATH = "/sms/status";
/** How many keys of its own recent sends an adapter remembers (a repeated send answers the first message). */
const REMEMBERED_KEYS = 10_000;
/** Twilio's clock and ours may differ: a message created this long before an in-doubt attempt still counts as it. */
const CLOCK_SKEW_MS = 5 * 60_000;
/** How many of the newest messages from the sender to the recipient an in-doubt attempt looks through. */
const LOOKBACK_MESSAGES = 50;

export interface TwilioSmsOptions {
  accountSid: string;
  authToken: string;
  /**
   * The kit's public URL (REACHKIT_PUBLIC_URL): every message asks Twilio for
   * status callbacks at `<publicUrl>/sms/status/<message id>`.
   */
  publicUrl: string;
  /**
   * The Messages API's base URL instead of `https://api.twilio.com`: a
   * Twilio-compatible provider, or a test server. Requests still go through
   * the Twilio library.
   */
  apiUrl?: string;
  /** How long a request may take before it counts as unanswered (default 30 s, the library's). */
  timeoutMs?: number;
}

/**
 * SMS and MMS through Twilio's Messages API with the official `twilio`
 * library. Each message carries a StatusCallback at the kit's
 * `/sms/status/<message id>` route, whose signed callbacks become receipts;
 * `verifyInbound` checks the inbound webhook's `X-Twilio-Signature`. Twilio
 * keeps no idempotency keys: an attempt after one in doubt looks for the
 * message among the newest Twilio holds from the sender to the recipient
 * (same body, created since the earlier attempt) before it sends.
 */
export function twilioSms(options: TwilioSmsOptions): SmsSender {
  // Loaded when a kit uses Twilio: the library costs about a tenth of a second of start-up.
  const sdk = createRequire(import.meta.url)("twilio") as TwilioSdk;
  const publicUrl = options.publicUrl.replace(/\/+$/, "");
  const httpClient = new sdk.RequestClient({ timeout: options.timeoutMs });
  const client: TwilioClient = sdk(options.accountSid, options.authToken, {
    httpClient: options.apiUrl === undefined ? httpClient : rebased(httpClient, options.apiUrl),
  });
  const messagesUri = `${(options.apiUrl ?? TWILIO_API_URL).replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages.json`;
  const headers = messagesApiHeaders();

  /**
   * The Messages API's create, posted through the library's HTTP client: what `client.messages.create` sends,
   * without its resource layer (a message instance of some forty fields, dates parsed) for the one field read
   * back, the sid: about a fifth of the library's CPU per text, a twentieth of a kit's in bench:delivery.
   */
  async function create(message: OutboundSms): Promise<string> {
    const data: Record<string, string | string[]> = { To: message.to, From: message.from, Body: message.body, StatusCallback: statusCallbackUrl(message.idempotencyKey) };
    if (message.mediaUrl !== undefined) data.MediaUrl = [message.mediaUrl];
    const response = await httpClient.request({ method: "post", uri: messagesUri, username: options.accountSid, password: options.authToken, headers, data });
    if (response.statusCode < 200 || response.statusCode >= 300) throw new sdk.RestException(response);
    const created = (typeof response.body === "string" ? JSON.parse(response.body) : response.body) as { sid?: unknown };
    if (typeof created.sid !== "string") throw new Error("the Messages API answered without a message sid");
    return created.sid;
  }
  const recent = new Map<string, string>();
  let receiptHandler: ((receipt: DeliveryReceipt) => Promise<void>) | undefined;

  const remember = (key: string, sid: string): SentSms => {
    recent.set(key, sid);
    if (recent.size > REMEMBERED_KEYS) recent.delete(recent.keys().next().value as string);
    return { providerMessageId: sid };
  };
  const statusCallbackUrl = (messageId: string) => `${publicUrl}${TWILIO_STATUS_PATH}/${encodeURIComponent(messageId)}`;
  const signed = (url: string, headers: InboundWebhookRequest["headers"], params: Readonly<Record<string, string>>) => {
    const signature = headers["x-twilio-signature"];
    return typeof signature === "string" && sdk.validateRequest(options.authToken, signature, url, params);
  };

  async function findEarlier(message: OutboundSms, since: number): Promise<string | undefined> {
    let candidates: Awaited<ReturnType<TwilioClient["messages"]["list"]>>;
    try {
      candidates = await client.messages.list({ to: message.to, from: message.from, limit: LOOKBACK_MESSAGES, pageSize: LOOKBACK_MESSAGES });
    } catch (error) {
      // Nothing left in this attempt: the earlier one stays in doubt, and the next attempt looks again.
      const failure = sendErrorOf(error);
      throw new SmsSendError(failure.kind, `looking for an earlier attempt: ${failure.message}`, { providerCode: failure.providerCode, retryable: failure.retryable });
    }
    const match = candidates.find(
      (candidate) => candidate.direction === "outbound-api" && candidate.body === message.body && candidate.dateCreated.getTime() >= since - CLOCK_SKEW_MS,
    );
    return match?.sid;
  }

  return {
    name: "twilio",
    async send(message: OutboundSms): Promise<SentSms> {
      const known = recent.get(message.idempotencyKey);
      if (known !== undefined) return { providerMessageId: known };
      if (message.earlierAttemptAt !== undefined) {
        const earlier = await findEarlier(message, message.earlierAttemptAt);
        if (earlier !== undefined) return remember(message.idempotencyKey, earlier);
      }
      try {
        return remember(message.idempotencyKey, await create(message));
      } catch (error) {
        throw sendErrorOf(error);
      }
    },
    verifyInbound: (request) => signed(request.url, request.headers, request.params),
    // Each message's StatusCallback URL ends with its outbox id.
    receiptsCarryMessageId: true,
    onReceipt(handler) {
      receiptHandler = handler;
    },
    routes: (): AnyRoute[] => [
      defineRoute({
        method: "POST",
        path: `${TWILIO_STATUS_PATH}/:messageId`,
        auth: { kind: "none" },
        body: formBody(v.record(v.string(), v.string())),
        summary: "Receive a Twilio status callback",
        docs: STATUS_CALLBACK_DOCS,
        async handler({ params, headers, body }) {
          const messageId = params.messageId ?? "";
          if (!signed(statusCallbackUrl(messageId), headers, body)) throw forbidden("the X-Twilio-Signature does not match this request");
          const status = reportedStatusOf(body.MessageStatus ?? body.SmsStatus ?? "");
          const providerMessageId = body.MessageSid ?? body.SmsSid;
          if (status !== undefined && providerMessageId !== undefined) {
            const errorCode = body.ErrorCode || undefined;
            await receiptHandler?.({
              messageId,
              providerMessageId,
              status,
              ...(errorCode !== undefined ? { errorCode, optedOut: isOptedOutCode(errorCode) } : {}),
              ...(body.ErrorMessage ? { errorMessage: body.ErrorMessage } : {}),
            });
          }
          return reply.empty(204);
        },
      }),
    ],
  };
}

const TWILIO_API_URL = "https://api.twilio.com";

/** The headers the library's `messages.create` posts with (its RequestClient adds Connection and Authorization). */
export function messagesApiHeaders(): Record<string, string> {
  const { version } = createRequire(import.meta.url)("twilio/package.json") as { version: string };
  const userAgent = `twilio-node/${version} (${process.platform} ${process.arch}) node/${process.version}`;
  return { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json", "Accept-Charset": "utf-8", "User-Agent": userAgent };
}

/** The library's HTTP client, its requests sent to `apiUrl` instead of Twilio's hosts. */
function rebased(client: RequestClient, apiUrl: string): RequestClient {
  const base = apiUrl.replace(/\/+$/, "");
  return Object.assign(Object.create(client) as RequestClient, {
    request: (request: Parameters<RequestClient["request"]>[0]) => {
      const original = new URL(request.uri);
      return client.request({ ...request, uri: `${base}${original.pathname}${original.search}` });
    },
  });
}

const STATUS_CALLBACK_DOCS: RouteDocs = {
  operationId: "receiveTwilioStatusCallback",
  tag: "Messaging",
  description:
    "Twilio's status callback for one outbound message (the URL the Twilio adapter gives with each message), checked by its X-Twilio-Signature. Moves the message in the outbox: sent, delivered, undelivered or failed with Twilio's error code.",
  params: { messageId: "The outbox id of the message" },
  requestBody: {
    contentType: "application/x-www-form-urlencoded",
    schema: v.object({
      MessageSid: v.string(),
      MessageStatus: v.pipe(v.string(), v.description("queued, sent, delivered, undelivered, failed, ...")),
      ErrorCode: v.optional(v.pipe(v.string(), v.description("Twilio's error code, when undelivered or failed"))),
    }),
  },
  responses: { 204: { description: "Recorded" }, 403: { description: "The signature does not match" } },
  security: { schemes: { ProviderSignature: { type: "apiKey", in: "header", name: "X-Twilio-Signature", description: "Twilio's signature of the request" } } },
  example: { params: { messageId: "01JQ0000000000000000000000" }, body: { MessageSid: "SM00000000000000000000000000000000", MessageStatus: "delivered" } },
};
