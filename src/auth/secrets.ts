import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

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
  return createHash("sha256").update(secret).digest("hex");
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A keyed signature, for URLs, webhook tokens and CSRF tokens derived from the kit secret. */
export function sign(secret: string, ...parts: string[]): string {
  return createHmac("sha256", secret).update(parts.join("\n")).digest("base64url");
}
