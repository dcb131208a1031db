import type { Migration, Storage } from "../../src/index.ts";
import type { DeliveryRows } from "./delivery-rows.ts";
import { WEBHOOK_DELIVERY_ROWS, WEBHOOK_FIRST_ATTEMPTS } from "./tokens.ts";
import { DELIVERIES, type DeliveryOutcomeRow, type DeliveryRecord, type DueDelivery } from "./records.ts";

/**
 * A delivery as earlier versions stored it: its queue state in its own row (`nextAttemptAt` before `dueAt`), and
 * `inFlightSince` while an attempt was out.
 */
type LegacyDelivery = DeliveryRecord & { nextAttemptAt?: number; inFlightSince?: number };

const ROWS_PER_PAGE = 1000;

/**
 * Databases made before deliveries kept their queue state and last attempt in rows of their own: each pending
 * delivery gets its due row (due at once if an attempt was out when the kit stopped, its mark left behind) and loses
 * its own queue fields; each finished one gets its outcome row. Its webhook's drain is armed at the start that
 * follows (RowDrains.rearm). Delivery rows written since say `pending` and have a due row: this runs once, before them.
 */
export const deliveriesDueInRowsOfTheirOwn: Migration = {
  id: "deliveries-due-in-rows-of-their-own",
  up: ({ storage, clock, resolve }) => moveQueueStateOut(storage, resolve(WEBHOOK_DELIVERY_ROWS), clock.now()),
};

async function moveQueueStateOut(storage: Storage, rows: DeliveryRows, now: number): Promise<void> {
  const legacy = storage.collection<LegacyDelivery>(DELIVERIES);
  let after: string | undefined;
  do {
    const page = await legacy.find({ orderBy: [{ field: "id" }], limit: ROWS_PER_PAGE, after });
    const due: DueDelivery[] = [];
    const outcomes: DeliveryOutcomeRow[] = [];
    for (const delivery of page.items) {
      if (delivery.status === "pending") {
        const dueAt = delivery.inFlightSince !== undefined ? now : (delivery.dueAt ?? delivery.nextAttemptAt ?? now);
        due.push({ id: delivery.id, webhookId: delivery.webhookId, attempts: delivery.attempts, dueAt, body: delivery.body });
      } else {
        outcomes.push(outcomeOf(delivery));
      }
    }
    if (due.length > 0) {
      await rows.due.upsertMany(due);
      await legacy.updateEach(due.map(({ id }) => ({ id, patch: { dueAt: undefined, inFlightSince: undefined, nextAttemptAt: undefined } })));
    }
    if (outcomes.length > 0) await rows.outcomes.upsertMany(outcomes);
    after = page.nextCursor;
  } while (after !== undefined);
}

/**
 * Databases whose due rows were made before they carried their deliveries' bodies: each gets its delivery's. A due
 * row whose delivery is gone has nothing to send and is deleted (the drain cancelled such a row).
 */
export const dueRowsCarryTheirBodies: Migration = {
  id: "due-rows-carry-their-bodies",
  up: ({ resolve }) => copyBodiesToDueRows(resolve(WEBHOOK_DELIVERY_ROWS)),
};

async function copyBodiesToDueRows(rows: DeliveryRows): Promise<void> {
  let after: string | undefined;
  do {
    const page = await rows.due.find({ orderBy: [{ field: "id" }], limit: ROWS_PER_PAGE, after });
    // Typed as stored: an earlier version's row has no body.
    const bodiless = page.items.flatMap((due) => ((due as Partial<DueDelivery>).body === undefined ? [due.id] : []));
    const deliveries = await rows.byId(rows.deliveries, bodiless);
    const bodies = bodiless.flatMap((id) => (deliveries.has(id) ? [{ id, patch: { body: deliveries.get(id)!.body } }] : []));
    if (bodies.length > 0) await rows.due.updateEach(bodies);
    const orphans = bodiless.filter((id) => !deliveries.has(id));
    if (orphans.length > 0) await rows.due.deleteWhere({ id: { in: orphans } });
    after = page.nextCursor;
  } while (after !== undefined);
}

/**
 * Databases made before a webhook's deliveries waited for their first attempt after its cursor (FirstAttempts): each
 * of their deliveries has a due row until it leaves the queue, or an outcome, so each webhook's cursor starts at its
 * last delivery.
 */
export const firstAttemptsAfterCursors: Migration = {
  id: "first-attempts-after-cursors",
  up: ({ resolve }) => resolve(WEBHOOK_FIRST_ATTEMPTS).startAtLastDeliveries(),
};

function outcomeOf(delivery: LegacyDelivery): DeliveryOutcomeRow {
  const { id, webhookId, status, attempts, lastAttemptAt, latencyMs, responseStatus, responseBody, error, updatedAt } = delivery;
  return { id, webhookId, status, attempts, updatedAt, ...defined({ lastAttemptAt, latencyMs, responseStatus, responseBody, error }) };
}

/** The fields of `fields` that hold a value. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
