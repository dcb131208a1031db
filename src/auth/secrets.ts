import { createHmac, hash, randomBytes } from "node:crypto";

/**
 * A new credential: a readable prefix (so a leaked key is recognisable in logs
 * and by secret scanners) and 32 random bytes.
 */
export function generateSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

/**
 * Credentials are stored only as this hash. They are 256-bit random values, so
 * a fast hash is enough; passwords use scrypt instead.
 */
export function hashSecret(secret: string): string {
  // The one-shot hash: no Hash object per call (every authenticated request hashes its token).
  return hash("sha256", secret, "hex");
}

/**
 * Comparison of two strings whose time depends only on their lengths: every
 * UTF-16 unit is compared, without an early exit, and without the two buffers
 * per call of crypto.timingSafeEqual (it runs on every authenticated request).
 */
export function safeEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** A keyed signature, for URLs, webhook tokens and CSRF tokens derived from the kit secret. */
export function sign(secret: string, ...parts: string[]): string {
  return createHmac("sha256", secret).update(parts.join("\n")).digest("base64url");
}
