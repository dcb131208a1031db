import { randomBytes, scrypt, type ScryptOptions } from "node:crypto";
import { safeEqual } from "../../src/index.ts";

/** Hashes and checks dashboard passwords. Swappable (argon2, a directory), scrypt by default. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Constant-time check of a password against a stored hash. */
  verify(password: string, stored: string): Promise<boolean>;
}

export interface ScryptParameters {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** OWASP's scrypt minimum (2^17, 8, 1) costs 128 MiB per hash; 2^15 keeps 32 MiB and ~50 ms. */
export const DEFAULT_SCRYPT: ScryptParameters = { N: 2 ** 15, r: 8, p: 1 };

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParameters): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/**
 * scrypt from node:crypto. The stored form `scrypt$N$r$p$salt$hash` carries its
 * parameters, so raising the cost later keeps old hashes verifiable.
 */
export function scryptPasswordHasher(parameters: ScryptParameters = DEFAULT_SCRYPT): PasswordHasher {
  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await derive(password, salt, parameters);
      const { N, r, p } = parameters;
      return ["scrypt", N, r, p, salt.toString("base64url"), key.toString("base64url")].join("$");
    },
    async verify(password, stored) {
      const [scheme, N, r, p, salt, expected] = stored.split("$");
      if (scheme !== "scrypt" || !salt || !expected) return false;
      const key = await derive(password, Buffer.from(salt, "base64url"), { N: Number(N), r: Number(r), p: Number(p) });
      return safeEqual(key.toString("base64url"), expected);
    },
  };
}
