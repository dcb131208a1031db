import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger, type OutboxMessage } from "../../src/index.ts";
import { EventBus } from "../../src/events/event-bus.ts";
import { MessageStatuses } from "../../src/messaging/message-statuses.ts";
import { DEFAULT_MESSAGING_SETTINGS } from "../../src/messaging/outbox.ts";
import { OutboxDeliveries } from "../../src/messaging/outbox-deliveries.ts";
import { OUTBOX_COLLECTION } from "../../src/messaging/outbox-record.ts";
import { startTestKit } from "../support/test-kit.ts";

describe("the outbox's attempts at a page", () => {
  // RowDrains pairs the i-th outcome with the page's i-th row (its in-flight set and counts): a page that fails some
  // messages unsent (an email in doubt after a crash) must still answer in the page's order.
  it("answers one outcome per message in the page's order, the messages it fails unsent among those it sends", async () => {
    const t = await startTestKit();
    try {
      const messages = t.kit.storage.collection<OutboxMessage>(OUTBOX_COLLECTION);
      const queued = [];
      for (const subject of ["one", "two", "three"]) {
        queued.push(await t.kit.outbox.sendEmail({ companyId: t.company.companyId, to: "jane@example.com", subject, text: subject, kind: "test" }));
      }
      // The second was being handed over when the process died: in doubt, failed without an attempt.
      await messages.update(queued[1]!.id, { inFlightSince: t.clock.now() });
      const page = await Promise.all(queued.map(async (message) => (await messages.get(message.id))!));
      const logger = silentLogger();
      const statuses = new MessageStatuses(messages, t.kit.storage, t.clock, logger, new EventBus(logger), () => {});
      const deliveries = new OutboxDeliveries(messages, t.kit.storage, t.clock, () => t.sms, () => t.email, DEFAULT_MESSAGING_SETTINGS, statuses, { maxAttempts: 3, backoffMs: () => 1000 });
      const outcomes = await Promise.all(await deliveries.start(page, { logger }));
      assert.deepEqual(outcomes, ["sent", "failed", "sent"]);
      assert.deepEqual(t.email.sent.map((sent) => sent.subject), ["one", "three"]);
    } finally {
      await t.stop();
    }
  });
});
