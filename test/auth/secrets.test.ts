import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { generateSecret, hashSecret, safeEqual } from "../../src/auth/secrets.ts";

test("hashSecret is the hex SHA-256 of the secret (what stored credentials hold)", () => {
  const secret = generateSecret("rk");
  assert.match(secret, /^rk_[A-Za-z0-9_-]{43}$/);
  assert.equal(hashSecret(secret), createHash("sha256").update(secret).digest("hex"));
  assert.equal(hashSecret("é"), createHash("sha256").update("é", "utf8").digest("hex"));
});

test("safeEqual is true only for identical strings", () => {
  const hash = hashSecret("a token");
  assert.equal(safeEqual(hash, hash.slice()), true);
  assert.equal(safeEqual("", ""), true);
  const lastFlipped = hash.slice(0, -1) + (hash.endsWith("0") ? "1" : "0");
  assert.equal(safeEqual(hash, lastFlipped), false);
  assert.equal(safeEqual(hash, hash.slice(0, -1)), false, "a prefix is not equal");
  assert.equal(safeEqual(hash.slice(0, -1), hash), false);
  assert.equal(safeEqual("x", ""), false);
  assert.equal(safeEqual("é", "e"), false);
  assert.equal(safeEqual("\u0100", "\u0000"), false, "units differing only above the low byte");
});
