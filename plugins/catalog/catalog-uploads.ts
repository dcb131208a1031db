import {
  CLOCK,
  HttpError,
  inject,
  injectable,
  JOBS,
  notFound,
  OBJECT_STORAGE,
  sortableId,
  STORAGE,
  type Clock,
  type Collection,
  type JobOutcome,
  type Jobs,
  type ObjectStorage,
  type Storage,
  type StoredObject,
} from "../../src/index.ts";
import type { CatalogErrorType } from "./line-check.ts";
import { UPLOADS, type CatalogUploadError, type UploadRecord, type UploadStatus } from "./records.ts";
import type { CatalogSettings } from "./settings.ts";
import { CATALOG_SETTINGS } from "./tokens.ts";

export const PROCESS_UPLOAD_JOB = "catalog.upload.process";
export const EXPIRE_UPLOAD_JOB = "catalog.upload.expire";
export const POLL_UPLOAD_JOB = "catalog.upload.poll";
export const processJobKey = (uploadId: string) => `catalog.upload.process:${uploadId}`;
export const expireJobKey = (uploadId: string) => `catalog.upload.expire:${uploadId}`;
const pollJobKey = (uploadId: string) => `catalog.upload.poll:${uploadId}`;

const OBJECT_KEY = /^catalog\/([^/]+)\/([^/]+)\.ndjson$/;
const objectKeyOf = (companyId: string, uploadId: string) => `catalog/${companyId}/${uploadId}.ndjson`;

/** A catalog upload as the interface shows it (§2.6). */
export interface CatalogUploadView {
  uploadId: string;
  status: UploadStatus;
  errors: CatalogUploadError[];
  productsReceived: number;
  productsProcessed: number;
  /** ISO 8601. */
  lastUpdated: string;
  /** ISO 8601: the file must be sent before this. */
  expires: string;
  uploadUrl: string;
  validateOnly: boolean;
}

/** The in-process view adds the exact count of each error type (the list is capped), and when the upload was made and its file came. */
export interface CatalogUpload extends CatalogUploadView {
  errorCounts: Partial<Record<CatalogErrorType, number>>;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; absent until the file came. */
  receivedAt?: string;
  /** The file's size; absent until it came. */
  fileBytes?: number;
}

export function uploadView(upload: UploadRecord): CatalogUploadView {
  return {
    uploadId: upload.id,
    status: upload.status,
    errors: upload.errors,
    productsReceived: upload.productsReceived,
    productsProcessed: upload.productsProcessed,
    lastUpdated: new Date(upload.lastUpdated).toISOString(),
    expires: new Date(upload.expiresAt).toISOString(),
    uploadUrl: upload.uploadUrl,
    validateOnly: upload.validateOnly,
  };
}

/** Every error of an upload, counted (its list holds at most a few of each type). */
export const errorTotal = (errorCounts: Partial<Record<CatalogErrorType, number>>): number => Object.values(errorCounts).reduce((sum, count) => sum + (count ?? 0), 0);

export const uploadWithCounts = (upload: UploadRecord): CatalogUpload => ({
  ...uploadView(upload),
  errorCounts: upload.errorCounts,
  createdAt: new Date(upload.createdAt).toISOString(),
  ...(upload.receivedAt !== undefined ? { receivedAt: new Date(upload.receivedAt).toISOString() } : {}),
  ...(upload.fileBytes !== undefined ? { fileBytes: upload.fileBytes } : {}),
});

/**
 * Upload records: created with a pre-signed URL, they take their file once
 * (then processing is queued as a durable job) or expire. With object storage
 * that clients upload to directly (S3), a durable job looks for the file
 * every `uploadPollMs` and the expiry job looks one last time.
 */
@injectable()
export class CatalogUploads {
  readonly records: Collection<UploadRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(OBJECT_STORAGE) private readonly objectStorage: ObjectStorage,
    @inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {
    this.records = storage.collection(UPLOADS);
  }

  async create(companyId: string, options: { validateOnly?: boolean } = {}): Promise<UploadRecord> {
    const now = this.clock.now();
    const id = sortableId(now);
    const objectKey = objectKeyOf(companyId, id);
    const expiresAt = now + this.settings.uploadWindowMs;
    const target = await this.objectStorage.createUploadTarget(objectKey, { expiresAt, maxBytes: this.settings.maxFileBytes });
    return this.storage.transaction(async () => {
      const upload = await this.records.insert({
        id,
        companyId,
        status: "initialized",
        validateOnly: options.validateOnly ?? false,
        errors: [],
        errorCounts: {},
        productsReceived: 0,
        productsProcessed: 0,
        createdAt: now,
        lastUpdated: now,
        expiresAt,
        uploadUrl: target.url,
        objectKey,
      });
      await this.jobs.enqueue({ type: EXPIRE_UPLOAD_JOB, payload: { uploadId: id }, runAt: expiresAt, key: expireJobKey(id), companyId });
      if (this.objectStorage.checkUpload) await this.#pollAt(upload, now + this.settings.uploadPollMs);
      return upload;
    });
  }

  /** The upload, only if it belongs to the company. */
  async get(companyId: string, uploadId: string): Promise<UploadRecord | undefined> {
    const upload = await this.records.get(uploadId);
    return upload?.companyId === companyId ? upload : undefined;
  }

  /** The most recent uploads of a company, oldest first. */
  async list(companyId: string, limit = this.settings.listLimit): Promise<UploadRecord[]> {
    const page = await this.records.find({ where: { companyId }, orderBy: [{ field: "id", direction: "desc" }], limit });
    return page.items.reverse();
  }

  /**
   * The object storage received a file (the PUT is still waiting for its
   * answer): mark the upload validating and queue its processing, in one
   * transaction. Throwing refuses the file.
   */
  async receive(object: StoredObject): Promise<void> {
    const match = OBJECT_KEY.exec(object.key);
    if (!match) return;
    const companyId = match[1]!;
    const uploadId = match[2]!;
    const now = this.clock.now();
    await this.storage.transaction(async () => {
      const upload = await this.records.update(
        uploadId,
        { status: "validating", receivedAt: now, fileBytes: object.bytes, queued: true, lastUpdated: now },
        { where: { status: "initialized", companyId } },
      );
      if (!upload) {
        const current = await this.records.get(uploadId);
        if (current?.status === "expired") throw new HttpError(403, "upload_expired", "the upload expired; create a new one");
        if (current) throw new HttpError(409, "already_uploaded", "this upload already has its file");
        throw notFound("no such upload");
      }
      await this.jobs.cancel(expireJobKey(uploadId));
      await this.jobs.enqueue({
        type: PROCESS_UPLOAD_JOB,
        payload: { uploadId },
        key: processJobKey(uploadId),
        companyId,
        maxAttempts: this.settings.maxAttempts,
      });
    });
  }

  /**
   * The poll job: looks in the bucket for the upload's file. The adapter tells
   * the listeners (`receive`) when it is there; otherwise the job comes back
   * after `uploadPollMs`, while that is before `expires` (the expiry job looks last).
   */
  async poll({ uploadId }: { uploadId: string }): Promise<JobOutcome | undefined> {
    const upload = await this.records.get(uploadId);
    if (upload?.status !== "initialized") return;
    if (await this.#lookForFile(upload)) return { uploadId, status: "received" };
    const next = this.clock.now() + this.settings.uploadPollMs;
    if (next < upload.expiresAt) await this.#pollAt(upload, next);
  }

  /** No file came before `expires` (the bucket is looked in one last time: the URL took files until now). */
  async expire({ uploadId }: { uploadId: string }): Promise<void> {
    const upload = await this.records.get(uploadId);
    if (upload?.status !== "initialized") return;
    if (this.objectStorage.checkUpload && (await this.#lookForFile(upload))) return;
    const now = this.clock.now();
    await this.records.update(uploadId, { status: "expired", lastUpdated: now }, { where: { status: "initialized" } });
  }

  /** Whether the file has arrived and was received; a file above the cap is deleted by the adapter, and one the upload refuses too. */
  async #lookForFile(upload: UploadRecord): Promise<boolean> {
    try {
      return (await this.objectStorage.checkUpload!(upload.objectKey, { maxBytes: this.settings.maxFileBytes })) !== undefined;
    } catch (error) {
      if (error instanceof HttpError) return false; // refused by `receive`: the upload is no longer waiting
      throw error;
    }
  }

  #pollAt(upload: UploadRecord, runAt: number): Promise<unknown> {
    return this.jobs.enqueue({ type: POLL_UPLOAD_JOB, payload: { uploadId: upload.id }, key: pollJobKey(upload.id), replace: true, runAt, companyId: upload.companyId });
  }
}
