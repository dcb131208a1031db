import { resolve } from "node:path";
import { consoleSms } from "../adapters/sms/console/index.ts";
import { fileSms } from "../adapters/sms/file/index.ts";
import { smppSms } from "../adapters/sms/smpp/index.ts";
import { twilioSms } from "../adapters/sms/twilio/index.ts";
import type { SmsSender } from "../src/index.ts";

/** Where the server's texts go (REACHKIT_SMS): printed, appended to a file, Twilio, or an SMPP gateway. */
export type SmsProvider =
  | { kind: "console" }
  | { kind: "file"; path: string }
  | { kind: "twilio"; accountSid: string; authToken: string; apiUrl?: string }
  | { kind: "smpp"; url: string };

/**
 * REACHKIT_SMS: unset or `console` prints texts (or appends them to
 * REACHKIT_SMS_LOG when it is set, as `file` does); `twilio` sends with
 * TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (REACHKIT_TWILIO_API_URL for a
 * Twilio-compatible API); `smpp://system_id:password@host:port` binds to an
 * SMPP gateway (Kannel, Jasmin, an aggregator's SMSC).
 */
export function smsProviderFromEnv(env: NodeJS.ProcessEnv): SmsProvider {
  const choice = env.REACHKIT_SMS || "console";
  const logFile = env.REACHKIT_SMS_LOG ? resolve(env.REACHKIT_SMS_LOG) : undefined;
  if (choice === "console") return logFile === undefined ? { kind: "console" } : { kind: "file", path: logFile };
  if (choice === "file") {
    if (logFile === undefined) throw new Error("REACHKIT_SMS=file needs REACHKIT_SMS_LOG, the file the texts are appended to");
    return { kind: "file", path: logFile };
  }
  if (choice === "twilio") {
    const accountSid = env.TWILIO_ACCOUNT_SID ?? "";
    const authToken = env.TWILIO_AUTH_TOKEN ?? "";
    if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid)) throw new Error(`REACHKIT_SMS=twilio needs TWILIO_ACCOUNT_SID, the account's SID (AC and 32 hex digits), got "${accountSid}"`);
    if (authToken === "") throw new Error("REACHKIT_SMS=twilio needs TWILIO_AUTH_TOKEN, the account's auth token");
    const apiUrl = env.REACHKIT_TWILIO_API_URL || undefined;
    if (apiUrl !== undefined && !isHttpUrl(apiUrl)) throw new Error(`REACHKIT_TWILIO_API_URL must be an http or https URL, got "${apiUrl}"`);
    return { kind: "twilio", accountSid, authToken, ...(apiUrl !== undefined ? { apiUrl } : {}) };
  }
  if (choice.startsWith("smpp://")) {
    const url = parseUrl(choice);
    if (!url?.hostname || !url.username || (url.port !== "" && !(Number(url.port) > 0))) {
      throw new Error("REACHKIT_SMS must be smpp://system_id:password@host:port for an SMPP gateway");
    }
    return { kind: "smpp", url: choice };
  }
  throw new Error(`REACHKIT_SMS must be console, file, twilio or smpp://system_id:password@host:port, got "${choice}"`);
}

/** The adapter of a provider; `publicUrl` is where Twilio's status callbacks reach the server. */
export function smsSenderOf(provider: SmsProvider, publicUrl: string): SmsSender {
  switch (provider.kind) {
    case "console":
      return consoleSms();
    case "file":
      return fileSms({ path: provider.path });
    case "twilio":
      return twilioSms({ accountSid: provider.accountSid, authToken: provider.authToken, publicUrl, ...(provider.apiUrl !== undefined ? { apiUrl: provider.apiUrl } : {}) });
    case "smpp":
      return smppSms({ url: provider.url });
  }
}

/** `REACHKIT_SMS_RATES=+15551234567=100,12345=30`: texts per second of single sender numbers, over REACHKIT_SMS_PER_SECOND. */
export function senderRatesFromEnv(text: string | undefined): Record<string, number> {
  const rates: Record<string, number> = {};
  for (const entry of (text ?? "").split(",").map((part) => part.trim()).filter(Boolean)) {
    const at = entry.lastIndexOf("=");
    const number = entry.slice(0, at).trim();
    const rate = Number(entry.slice(at + 1));
    if (at <= 0 || !(rate > 0)) throw new Error(`REACHKIT_SMS_RATES must be comma-separated number=texts-per-second pairs (e.g. +15551234567=100,12345=30), got "${text}"`);
    rates[number] = rate;
  }
  return rates;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

const isHttpUrl = (text: string) => ["http:", "https:"].includes(parseUrl(text)?.protocol ?? "");
