import { isEmailAddress } from "../src/index.ts";

/** Where the server's emails go: printed on standard output, or an SMTP server. */
export type EmailSetting = { kind: "console" } | { kind: "smtp"; url: string };

/** Where the server keeps objects (catalog files): the data directory, or an S3 bucket. */
export type ObjectStorageSetting =
  | { kind: "fs" }
  | { kind: "s3"; bucket: string; prefix: string; region: string; endpoint?: string; credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } };

export interface DeliveryConfig {
  email: EmailSetting;
  /** The address emails come from (`REACHKIT_EMAIL_FROM`). */
  emailFrom?: string;
  objectStorage: ObjectStorageSetting;
}

export const CONSOLE_DELIVERY: DeliveryConfig = { email: { kind: "console" }, objectStorage: { kind: "fs" } };

/**
 * `REACHKIT_EMAIL` (`smtp://user:password@host:port`, `smtps://...`, or
 * unset: printed), `REACHKIT_EMAIL_FROM`, `REACHKIT_OBJECT_STORAGE`
 * (`s3://bucket/optional/prefix`, or unset: the data directory),
 * `REACHKIT_S3_ENDPOINT`, `AWS_REGION` and the keys `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`); without keys the AWS
 * SDK finds its own (a profile, an instance or task role).
 */
export function deliveryFromEnv(env: NodeJS.ProcessEnv): DeliveryConfig {
  return { ...emailFromEnv(env), objectStorage: objectStorageFromEnv(env) };
}

function emailFromEnv(env: NodeJS.ProcessEnv): Pick<DeliveryConfig, "email" | "emailFrom"> {
  const text = env.REACHKIT_EMAIL || "console";
  const from = env.REACHKIT_EMAIL_FROM || undefined;
  if (from !== undefined && !isEmailAddress(from)) throw new Error(`REACHKIT_EMAIL_FROM must be an email address (news@shop.example), got "${from}"`);
  if (text === "console") return { email: { kind: "console" }, ...(from ? { emailFrom: from } : {}) };
  if (!/^smtps?:\/\/[^/]/.test(text) || !URL.canParse(text)) {
    throw new Error(`REACHKIT_EMAIL must be smtp://user:password@host:port, smtps://user:password@host:port or console, got "${redactPassword(text)}"`);
  }
  if (from === undefined) throw new Error("REACHKIT_EMAIL_FROM must be set with REACHKIT_EMAIL: the address the server's emails come from");
  return { email: { kind: "smtp", url: text }, emailFrom: from };
}

function objectStorageFromEnv(env: NodeJS.ProcessEnv): ObjectStorageSetting {
  const text = env.REACHKIT_OBJECT_STORAGE || "fs";
  if (text === "fs") return { kind: "fs" };
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text);
  if (!match) throw new Error(`REACHKIT_OBJECT_STORAGE must be s3://bucket, s3://bucket/prefix or fs, got "${text}"`);
  const endpoint = env.REACHKIT_S3_ENDPOINT || undefined;
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint)) throw new Error(`REACHKIT_S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const prefix = (match[2] ?? "").replace(/^\/+|\/+$/g, "");
  return {
    kind: "s3",
    bucket: match[1]!,
    prefix: prefix ? `${prefix}/` : "",
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
    ...(endpoint ? { endpoint } : {}),
    // Without keys in the environment, the AWS SDK looks further (a profile, an instance or task role).
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  };
}

/** A URL as it may be printed: its password replaced. */
function redactPassword(text: string): string {
  return text.replace(/:[^:@/]*@/, ":***@");
}
