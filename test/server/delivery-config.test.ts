import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deliveryFromEnv } from "../../server/delivery-config.ts";

describe("server configuration: email and object storage", () => {
  it("prints emails and keeps objects in the data directory by default", () => {
    assert.deepEqual(deliveryFromEnv({}), { email: { kind: "console" }, objectStorage: { kind: "fs" } });
  });

  it("reads an SMTP URL with its sender, and an S3 bucket with its prefix, endpoint, region and keys", () => {
    const delivery = deliveryFromEnv({
      REACHKIT_EMAIL: "smtp://mailer:secret@mail.example.com:587",
      REACHKIT_EMAIL_FROM: "news@shop.example",
      REACHKIT_OBJECT_STORAGE: "s3://shop-files/reachkit/",
      REACHKIT_S3_ENDPOINT: "http://127.0.0.1:9000",
      AWS_REGION: "eu-west-3",
      AWS_ACCESS_KEY_ID: "AKID",
      AWS_SECRET_ACCESS_KEY: "SECRET",
    });
    assert.deepEqual(delivery, {
      email: { kind: "smtp", url: "smtp://mailer:secret@mail.example.com:587" },
      emailFrom: "news@shop.example",
      objectStorage: {
        kind: "s3",
        bucket: "shop-files",
        prefix: "reachkit/",
        region: "eu-west-3",
        endpoint: "http://127.0.0.1:9000",
        credentials: { accessKeyId: "AKID", secretAccessKey: "SECRET" },
      },
    });
    assert.deepEqual(deliveryFromEnv({ REACHKIT_OBJECT_STORAGE: "s3://shop-files" }).objectStorage, { kind: "s3", bucket: "shop-files", prefix: "", region: "us-east-1" });
  });

  it("names the variable of a bad value, and never prints the SMTP password", () => {
    const refused: Array<[Record<string, string>, RegExp]> = [
      [{ REACHKIT_EMAIL: "http://mail.example.com" }, /REACHKIT_EMAIL must be smtp:\/\//],
      [{ REACHKIT_EMAIL: "smtp://mailer:secret@mail.example.com:587" }, /REACHKIT_EMAIL_FROM must be set/],
      [{ REACHKIT_EMAIL_FROM: "not an address" }, /REACHKIT_EMAIL_FROM must be an email address/],
      [{ REACHKIT_OBJECT_STORAGE: "gs://bucket" }, /REACHKIT_OBJECT_STORAGE must be s3:\/\/bucket/],
      [{ REACHKIT_OBJECT_STORAGE: "s3://Bad_Bucket" }, /REACHKIT_OBJECT_STORAGE must be s3:\/\/bucket/],
      [{ REACHKIT_OBJECT_STORAGE: "s3://bucket", REACHKIT_S3_ENDPOINT: "minio:9000" }, /REACHKIT_S3_ENDPOINT must be an http\(s\) URL/],
    ];
    for (const [env, message] of refused) assert.throws(() => deliveryFromEnv(env), message, JSON.stringify(env));
    assert.throws(
      () => deliveryFromEnv({ REACHKIT_EMAIL: "smtp//mailer:hunter2@mail.example.com" }),
      (error: Error) => !error.message.includes("hunter2"),
    );
  });
});
