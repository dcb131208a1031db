import type { JobContext, JobOutcome } from "../jobs/job-definition.ts";
import type { Jobs } from "../jobs/jobs.ts";
import { RowDrains } from "../jobs/row-drains.ts";
import type { Clock } from "../ports/clock.ts";
import type { Collection, Storage } from "../ports/storage.ts";
import type { AttemptOutcome, OutboxDeliveries } from "./outbox-deliveries.ts";
import { channelOf, type OutboxChannel, type OutboxMessage } from "./outbox-record.ts";

/** The job that sends one sender's queued messages, one live per sender. */
export const OUTBOX_DRAIN_JOB = "reachkit.outbox.drain";

export interface DrainPayload {
  channel: OutboxChannel;
  /** The sender number, or an email's From. */
  from: string;
}

/** One live drain per sender, across processes: the jobs' active key. */
export const drainKey = (sender: DrainPayload): string => `outbox-drain:${sender.channel}:${sender.from}`;

/** The sender whose drain sends `message`. */
const senderOf = (message: OutboxMessage): DrainPayload => ({ channel: channelOf(message), from: message.from });

const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ["sent", "failed", "retrying", "unrecorded"];

/**
 * The drains of the outbox (RowDrains): one job per sender (channel + from) sends its queued messages in
 * (dueAt, id) order, a page at a time through OutboxDeliveries (paced by the sender's limiter), and ends
 * when none is due. A message arms its sender's drain in the transaction that stores it.
 */
export class OutboxDrains {
  readonly #drains: RowDrains<OutboxMessage, DrainPayload, AttemptOutcome>;

  constructor(messages: Collection<OutboxMessage>, storage: Storage, clock: Clock, jobs: Jobs, deliveries: OutboxDeliveries) {
    this.#drains = new RowDrains(
      {
        jobType: OUTBOX_DRAIN_JOB,
        rows: messages,
        keyOf: drainKey,
        payloadOf: senderOf,
        drainField: "from",
        drainValue: (sender) => sender.from,
        // Each asks the provider first (`earlierAttemptAt`) when it goes again.
        inFlight: { inFlightSince: { exists: true } },
        outcomes: ATTEMPT_OUTCOMES,
        pageSize: deliveries.pageSize,
        roomFor: (sender) => deliveries.roomFor(sender),
        start: (page, _sender, context) => deliveries.start(page, { logger: context.logger }),
        describe: (sender) => ({ from: sender.from }),
      },
      storage,
      clock,
      jobs,
    );
  }

  /** In the transaction that stored `message` (queued, with its `dueAt`): its sender's drain runs by then. */
  arm(message: OutboxMessage): Promise<void> {
    return this.#drains.arm(senderOf(message), message.dueAt!);
  }

  /** The drain job's handler. */
  drain(sender: DrainPayload, context: JobContext): Promise<JobOutcome> {
    return this.#drains.drain(sender, context);
  }
}
