import type { S3Client } from "@aws-sdk/client-s3";
import { Transform, type Readable, type TransformCallback } from "node:stream";
import {
  ObjectTooLargeError,
  systemClock,
  type Clock,
  type ObjectStorage,
  type StoredObject,
  type UploadListener,
  type UploadTarget,
  type UploadTargetOptions,
} from "../../../src/index.ts";

/** The longest a pre-signed S3 URL can live (SigV4: seven days). */
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
/** Bytes per part of a streamed put: S3's smallest part, one part in memory at a time. */
const PART_BYTES = 5 * 1024 * 1024;

export interface S3ObjectStorageOptions {
  bucket: string;
  /** Put before every key (`reachkit/`), to share a bucket. Default none. */
  prefix?: string;
  /** Default `AWS_REGION`, else us-east-1. */
  region?: string;
  /** An S3-compatible store's URL (MinIO, Ceph, R2...): paths then name the bucket (`/bucket/key`). */
  endpoint?: string;
  /** Bucket in the path instead of the host name. Default: true with `endpoint`, false without. */
  forcePathStyle?: boolean;
  /** Default: the AWS SDK's chain (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, a profile, an instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Signs upload URLs from its time. Default: the system clock. */
  clock?: Clock;
}

/**
 * Objects in an S3 bucket (or an S3-compatible store). An upload target is a
 * pre-signed PUT straight to the bucket, valid until `expiresAt`; the bucket
 * does not tell the kit of arrivals, so whoever created the target calls
 * `checkUpload` (the catalog does from a durable job) and the listeners are
 * told then. Bodies stream both ways: a put goes up in parts of 5 MiB.
 * The AWS SDK is loaded at the first call, not at start-up (about 250 ms of
 * CPU that every start and CLI call would pay).
 */
export function s3ObjectStorage(options: S3ObjectStorageOptions): ObjectStorage {
  const clock = options.clock ?? systemClock();
  const prefix = options.prefix ?? "";
  let sdk: ReturnType<typeof loadSdk> | undefined;
  const aws = () => (sdk ??= loadSdk(options));
  const listeners = new Set<UploadListener>();
  const target = (key: string) => ({ Bucket: options.bucket, Key: `${prefix}${key}` });

  async function head(key: string): Promise<StoredObject | undefined> {
    const { client, s3 } = await aws();
    try {
      const found = await client.send(new s3.HeadObjectCommand(target(key)));
      return { key, bytes: found.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async function remove(key: string): Promise<void> {
    const { client, s3 } = await aws();
    await client.send(new s3.DeleteObjectCommand(target(key)));
  }

  return {
    name: "s3",
    async createUploadTarget(key, { expiresAt, maxBytes }: UploadTargetOptions): Promise<UploadTarget> {
      if (!Number.isSafeInteger(expiresAt) || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
        throw new TypeError("expiresAt and maxBytes must be non-negative integers");
      }
      const seconds = Math.max(1, Math.ceil((expiresAt - clock.now()) / 1000));
      if (seconds > MAX_PRESIGNED_SECONDS) throw new RangeError("an S3 upload URL lives at most seven days");
      const { client, s3, getSignedUrl } = await aws();
      // Signed so that it ends at expiresAt: the signature's time plus its lifetime.
      const url = await getSignedUrl(client, new s3.PutObjectCommand(target(key)), { expiresIn: seconds, signingDate: new Date(expiresAt - seconds * 1000) });
      return { url, method: "PUT", expiresAt, maxBytes };
    },
    async put(key, body, putOptions): Promise<StoredObject> {
      const { client, Upload } = await aws();
      const counter = new ByteCounter(putOptions?.maxBytes);
      const upload = new Upload({ client, params: { ...target(key), Body: body.pipe(counter) }, partSize: PART_BYTES, queueSize: 1, leavePartsOnError: false });
      body.once("error", (error) => counter.destroy(error));
      await upload.done().catch((error: unknown) => {
        throw counter.tooLarge ?? error;
      });
      return { key, bytes: counter.bytes };
    },
    async get(key) {
      const { client, s3 } = await aws();
      try {
        const found = await client.send(new s3.GetObjectCommand(target(key)));
        return found.Body as Readable;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    delete: remove,
    onUploaded(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async checkUpload(key, { maxBytes }) {
      const object = await head(key);
      if (!object) return undefined;
      if (object.bytes > maxBytes) {
        await remove(key);
        return undefined;
      }
      try {
        for (const listener of listeners) await listener(object);
      } catch (error) {
        await remove(key);
        throw error;
      }
      return object;
    },
  };
}

async function loadSdk(options: S3ObjectStorageOptions) {
  const [s3, { Upload }, { getSignedUrl }] = await Promise.all([import("@aws-sdk/client-s3"), import("@aws-sdk/lib-storage"), import("@aws-sdk/s3-request-presigner")]);
  const client: S3Client = new s3.S3Client({
    region: options.region ?? process.env.AWS_REGION ?? "us-east-1",
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // A checksum in the signature would oblige every uploader to send it; S3 checks the body's own MD5 and length.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return { s3, Upload, getSignedUrl, client };
}

/** The store has no such object (S3 answers a HEAD with a bare 404, a GET with NoSuchKey). */
function isMissing(error: unknown): boolean {
  const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return failure.name === "NoSuchKey" || failure.name === "NotFound" || failure.$metadata?.httpStatusCode === 404;
}

/** Counts the bytes passing through and fails the stream as soon as they pass `maxBytes`. */
class ByteCounter extends Transform {
  bytes = 0;
  tooLarge: ObjectTooLargeError | undefined;

  constructor(private readonly maxBytes: number | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) {
      this.tooLarge = new ObjectTooLargeError(this.maxBytes);
      return callback(this.tooLarge);
    }
    callback(null, chunk);
  }
}
