import S3rver from "@20minutes/s3rver";
import { request } from "node:http";
import type { Readable } from "node:stream";
import type { UploadRequest } from "../../src/testkit/index.ts";
import { temporaryDirectory } from "./temp-dir.ts";

export interface TestS3Server {
  /** The server's URL: `REACHKIT_S3_ENDPOINT`. */
  endpoint: string;
  bucket: string;
  /** The access key the server knows (s3rver's own). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  close(): Promise<void>;
}

/**
 * An S3-compatible server on loopback (@20minutes/s3rver, which checks
 * Signature Version 4 and URL expiry), with one bucket that, like a
 * private bucket, refuses requests that are not signed.
 */
export async function startS3Server(bucket = "reachkit-test"): Promise<TestS3Server> {
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: temporaryDirectory("s3"), configureBuckets: [{ name: bucket }] });
  server.middleware.unshift(async (context, next) => {
    if (context.get("authorization") || context.query["X-Amz-Algorithm"]) return next();
    context.status = 403;
    context.type = "application/xml";
    context.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    close: () => server.close(),
  };
}

/** A client's PUT to an upload URL over a real socket; resolves with the status. */
export function putToUrl({ url, body, headers }: UploadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: "PUT", headers: { ...headers } }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    outgoing.on("error", reject);
    (body as Readable).pipe(outgoing);
  });
}
