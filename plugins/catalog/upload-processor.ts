import {
  CLOCK,
  EVENTS,
  inject,
  injectable,
  JOBS,
  LOGGER,
  OBJECT_STORAGE,
  STORAGE,
  type Clock,
  type EventBus,
  type EventName,
  type JobContext,
  type Jobs,
  type Logger,
  type ObjectStorage,
  type ReachkitEvents,
  type Storage,
} from "../../src/index.ts";
import type { CatalogStore } from "./catalog-store.ts";
import { errorTotal, PROCESS_UPLOAD_JOB, processJobKey, type CatalogUploads } from "./catalog-uploads.ts";
import { prefixRange, type UploadRecord } from "./records.ts";
import type { CatalogSettings } from "./settings.ts";
import { CATALOG_SETTINGS, CATALOG_STORE, CATALOG_UPLOADS } from "./tokens.ts";
import { LostClaimError, UploadRun } from "./upload-run.ts";

/** A processing job's outcome, as logged: an ended upload's counts, or why it waits. */
export type UploadOutcome =
  | { uploadId: string; status: string }
  | { uploadId: string; status: string; validateOnly: boolean; lines: number; productsSaved: number; errors: number; seconds: number };

/** Journey events emitted per read of the pending ones. */
const EVENTS_PER_PAGE = 200;

/**
 * The durable processing job of an upload. Uploads of one company are
 * processed one at a time, in the order their files arrived: the first queued
 * upload runs, the others look again every `queuePollMs`. A run claims the
 * upload, writes a new catalog version (UploadRun), then either drops it
 * (validateOnly) or commits it by moving the company's head, and emits the
 * journey events the save computed. A run that dies is retried from the first
 * line; what it wrote is dropped first.
 */
@injectable()
export class UploadProcessor {
  private readonly logger: Logger;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(OBJECT_STORAGE) private readonly objectStorage: ObjectStorage,
    @inject(EVENTS) private readonly events: EventBus,
    @inject(CATALOG_UPLOADS) private readonly uploads: CatalogUploads,
    @inject(CATALOG_STORE) private readonly store: CatalogStore,
    @inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
    @inject(LOGGER) logger: Logger,
  ) {
    // As the plugin context's logger: every entry names the plugin.
    this.logger = logger.child({ plugin: "catalog" });
  }

  async process({ uploadId }: { uploadId: string }, context: JobContext): Promise<UploadOutcome | undefined> {
    const started = this.clock.now();
    const upload = await this.uploads.records.get(uploadId);
    if (!upload) return;
    if (!upload.queued) {
      // Committed by an earlier run that stopped before its events were all out.
      if (upload.status === "completed") await this.#afterCommit(upload);
      return;
    }
    if (!(await this.#isItsTurn(upload))) {
      await this.#requeue(upload, this.clock.now() + this.settings.queuePollMs);
      return { uploadId, status: "waiting for an earlier upload of the company" };
    }
    const claim = `${context.job.id}:${context.attempt}`;
    const head = await this.store.headVersion(upload.companyId);
    const version = head + 1;
    const claimed = await this.uploads.records.update(
      upload.id,
      { claim, version, status: "validating", productsReceived: 0, productsProcessed: 0, errors: [], errorCounts: {}, lastUpdated: this.clock.now() },
      { where: { queued: true } },
    );
    if (!claimed) return;
    try {
      await this.store.deleteVersionsAbove(upload.companyId, head);
      await this.store.deletePendingEvents(upload.id);
      const file = await this.objectStorage.get(upload.objectKey);
      if (!file) {
        await this.#fail(claimed, claim, "the uploaded file could not be found");
        return;
      }
      const run = new UploadRun(claimed, claim, version, this.store, this.uploads.records, this.storage, this.clock, this.settings);
      const end = await run.run(file, context.signal);
      if (end === "stopped") {
        // The kit is stopping: start again after the restart, without spending an attempt.
        await this.store.deleteVersion(upload.companyId, version);
        await this.#requeue(upload, this.clock.now());
        return;
      }
      if (end === "no products") {
        // Nothing was written (there was no product); the run recorded why it stopped.
        await this.#finish(claim, upload.id, "failed");
      } else if (upload.validateOnly) {
        await this.store.deleteVersion(upload.companyId, version);
        await this.#finish(claim, upload.id, "validated");
      } else {
        await this.#settle(claim, upload.id, { status: "validated" });
        await this.storage.transaction(async () => {
          await this.#finish(claim, upload.id, "completed");
          await this.store.commit(upload.companyId, version);
        });
      }
    } catch (error) {
      if (error instanceof LostClaimError) return;
      // A run presumed dead and taken over must not undo the writes of the run that took over.
      if ((await this.uploads.records.get(upload.id))?.claim !== claim) return;
      const message = error instanceof Error ? error.message : String(error);
      this.logger.error("catalog upload processing failed", { uploadId, companyId: upload.companyId, attempt: context.attempt, error });
      await this.store.deleteVersion(upload.companyId, version);
      await this.store.deletePendingEvents(upload.id);
      if (context.attempt < context.job.maxAttempts) throw error;
      await this.#fail(claimed, claim, message);
      return this.#outcome(upload.id, started);
    }
    const completed = await this.uploads.records.get(upload.id);
    if (completed?.status === "completed") await this.#afterCommit(completed);
    else await this.objectStorage.delete(upload.objectKey);
    return this.#outcome(upload.id, started);
  }

  /** What the job logs when an upload ends: its lines, products saved, errors and seconds. */
  async #outcome(uploadId: string, started: number): Promise<UploadOutcome | undefined> {
    const upload = await this.uploads.records.get(uploadId);
    if (!upload) return undefined;
    return {
      uploadId,
      status: upload.status,
      validateOnly: upload.validateOnly,
      lines: upload.productsReceived,
      productsSaved: upload.status === "completed" ? upload.productsProcessed : 0,
      errors: errorTotal(upload.errorCounts),
      seconds: (this.clock.now() - started) / 1000,
    };
  }

  /**
   * The first queued upload of the company (by arrival) runs. One whose job
   * is gone (it failed every attempt without settling) would block the queue
   * forever: it is marked failed here.
   */
  async #isItsTurn(upload: UploadRecord): Promise<boolean> {
    for (;;) {
      const first = await this.uploads.records.findOne({ companyId: upload.companyId, queued: true }, [{ field: "receivedAt" }, { field: "id" }]);
      if (!first || first.id === upload.id) return true;
      if (await this.jobs.byKey(processJobKey(first.id))) return false;
      await this.store.deleteVersionsAbove(first.companyId, await this.store.headVersion(first.companyId));
      await this.store.deletePendingEvents(first.id);
      await this.#fail(first, first.claim ?? null, "processing stopped: its job failed on every attempt");
    }
  }

  #requeue(upload: UploadRecord, runAt: number): Promise<unknown> {
    return this.jobs.enqueue({
      type: PROCESS_UPLOAD_JOB,
      payload: { uploadId: upload.id },
      key: processJobKey(upload.id),
      replace: true,
      runAt,
      companyId: upload.companyId,
      maxAttempts: this.settings.maxAttempts,
    });
  }

  async #settle(claim: string, uploadId: string, patch: Partial<UploadRecord>): Promise<void> {
    const updated = await this.uploads.records.update(uploadId, { ...patch, lastUpdated: this.clock.now() }, { where: { claim } });
    if (!updated) throw new LostClaimError(uploadId);
  }

  /** Ends processing: the next upload of the company may run. */
  #finish(claim: string, uploadId: string, status: "validated" | "completed" | "failed"): Promise<void> {
    return this.#settle(claim, uploadId, { status, queued: null, claim: null });
  }

  /** Marks the upload failed, saying why; the catalog is as it was before it. */
  async #fail(upload: UploadRecord, claim: string | null, reason: string): Promise<void> {
    const what = upload.validateOnly ? "the file could not be checked" : "the catalog could not be saved";
    const now = this.clock.now();
    const failed = await this.uploads.records.update(
      upload.id,
      {
        status: "failed",
        queued: null,
        claim: null,
        // Line errors of a run that did not finish would be a partial list: the reason stands alone.
        errors: [{ errorType: "SAVE_FAILED", errorMessage: `${what}: ${reason}. Nothing from this upload was saved.`, lineNum: 0 }],
        errorCounts: { SAVE_FAILED: 1 },
        lastUpdated: now,
      },
      { where: { queued: true, claim } },
    );
    if (failed) {
      // The operator hears of it here (the interface: "the service operator is notified").
      this.logger.error("catalog upload failed", { uploadId: upload.id, companyId: upload.companyId, reason });
      await this.objectStorage.delete(upload.objectKey);
    }
  }

  /**
   * Emits the journey events of a committed save, page by page, each page in
   * the transaction that deletes it (in-transaction listeners commit with the
   * deletion), then drops the file. Safe to run again.
   */
  async #afterCommit(upload: UploadRecord): Promise<void> {
    for (;;) {
      const page = await this.store.pendingEvents.find({ where: { id: prefixRange(`${upload.id}:`) }, orderBy: [{ field: "id" }], limit: EVENTS_PER_PAGE });
      if (page.items.length === 0) break;
      await this.storage.transaction(async () => {
        for (const event of page.items) {
          await this.events.emit(event.name as EventName, event.payload as ReachkitEvents[EventName]);
        }
        await this.store.pendingEvents.deleteWhere({ id: { in: page.items.map((event) => event.id) } });
      });
    }
    await this.objectStorage.delete(upload.objectKey);
  }
}
