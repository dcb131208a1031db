import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

/** The prefix of a signing key, as Standard Webhooks libraries expect it. */
const KEY_PREFIX = "whsec_";

/** A new signing key: `whsec_` and 32 random bytes in base64. */
export function newSigningKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString("base64")}`;
}

/**
 * The headers that sign one attempt, keys newest first:
 *
 * - `x-attentive-hmac-sha256`: hex HMAC-SHA256 of the raw body, keyed with the
 *   oldest key that still signs, as the text it is shown as (what the
 *   reference's receivers check). The header holds one signature, so during a
 *   rotation's overlap it keeps the key receivers know, and the new key takes
 *   over when the overlap ends;
 * - `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`
 *   (Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 *   `id.timestamp.body`, keyed with the key's bytes, for every key that signs,
 *   space-separated), so a receiver can refuse a replayed or stale request.
 */
export function signatureHeaders(keys: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  const oldest = keys.at(-1);
  if (oldest === undefined) throw new Error("no signing key");
  const signed = `${id}.${timestampSeconds}.${body}`;
  return {
    "x-attentive-hmac-sha256": createHmac("sha256", hmacKeys(oldest).asText).update(body).digest("hex"),
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": keys.map((key) => `v1,${createHmac("sha256", hmacKeys(key).bytes).update(signed).digest("base64")}`).join(" "),
  };
}

/** A signing key as each HMAC takes it: the text it is shown as (the reference's header), its bytes (Standard Webhooks). */
interface HmacKeys {
  asText: KeyObject;
  bytes: KeyObject;
}

/**
 * Made once per key rather than at every delivery: an HMAC keyed with a KeyObject skips the key's
 * conversion (and the base64 decoding of its bytes), a fifth to a third of a delivery's signing.
 * An application signs with one key, two during a rotation's overlap: the map stays small, and is
 * emptied should keys pile up in a long-lived process.
 */
const hmacKeyCache = new Map<string, HmacKeys>();
const HMAC_KEYS_KEPT = 1024;

function hmacKeys(key: string): HmacKeys {
  let keys = hmacKeyCache.get(key);
  if (keys === undefined) {
    if (hmacKeyCache.size >= HMAC_KEYS_KEPT) hmacKeyCache.clear();
    const bytes = Buffer.from(key.startsWith(KEY_PREFIX) ? key.slice(KEY_PREFIX.length) : key, "base64");
    keys = { asText: createSecretKey(Buffer.from(key, "utf8")), bytes: createSecretKey(bytes) };
    hmacKeyCache.set(key, keys);
  }
  return keys;
}

/** Keys are stored sealed (AES-256-GCM) with a key derived from the kit secret: a copy of the database alone does not give them away. */
export function sealKey(kitSecret: string, key: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(kitSecret), iv);
  const ciphertext = Buffer.concat([cipher.update(key, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString("base64url")).join(".");
}

/** The key a sealed one holds; throws when the kit secret is not the one that sealed it. */
export function unsealKey(kitSecret: string, sealed: string): string {
  const [iv, tag, ciphertext] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
  if (!iv || !tag || !ciphertext) throw new Error("not a sealed signing key");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(kitSecret), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
}

function sealingKey(kitSecret: string): Buffer {
  return createHmac("sha256", kitSecret).update("reachkit webhook signing keys").digest();
}
