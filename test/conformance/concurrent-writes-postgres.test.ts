import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { CAMPAIGN_SENDER } from "../../plugins/campaigns/index.ts";
import type { Collection, Doc, Storage } from "../../src/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { prepareTemplate } from "../support/test-storage.ts";
import { LastOwnerError } from "../../plugins/oauth/index.ts";
import { authorizedCode, exchangeCode, REDIRECT_URI, startOAuthTestKit } from "../support/oauth.ts";
import { startTestKit } from "../support/test-kit.ts";
import { ALL_MESSAGES, adaReminder, advanceTo, createReminder, ok, startAppointmentsKit, tactical, textsTo as appointmentTexts, typeWithMessages } from "../plugins/appointments/support.ts";
import { startCampaignsKit } from "../plugins/campaigns/support.ts";
import { items, startJourneysKit } from "../plugins/journeys/support.ts";
import { startPrivacyKit } from "../plugins/privacy/support.ts";
import { eligibilityRows, optIn, PHONE, textsTo } from "../plugins/subscriptions/support.ts";

/**
 * Read-then-write code of the plugins, run as two transactions at once on
 * PostgreSQL, where the transactions of one process run side by side: the
 * first is held just after its read, the second runs until it commits or
 * waits on the first's locks, then the first goes on. Each outcome is the
 * one of the two run one after the other, never a lost update.
 */
let cluster: PostgresCluster;
let template: string;
before(async () => {
  cluster = await startPostgres();
  template = new URL(await prepareTemplate(await cluster.createDatabase())).pathname.slice(1);
});
after(() => cluster.stop());

interface Held {
  storage: Storage;
  url: string;
  /** Holds the next call of the method until `release`; `reached` settles when it is held. */
  holdNext(): { reached: Promise<void>; release: () => void };
}

/** A PostgreSQL storage on a fresh database whose `method` on `collection` can be held after its answer (a read), or before it runs (a write). */
async function heldStorage<M extends "find" | "findOne" | "count" | "update" | "getForUpdate">(collection: string, method: M, when: "after" | "before" = "after"): Promise<Held> {
  const url = await cluster.createDatabase(template);
  let next: { reached: () => void; released: Promise<void> } | undefined;
  const hold = async (name: string) => {
    const held = name === collection ? next : undefined;
    if (held) {
      next = undefined;
      held.reached();
      await held.released;
    }
  };
  const storage = withCollectionMethod(postgresStorage({ url, poolSize: 4 }), method, (original, name) =>
    (async (...args: Parameters<Collection<Doc>[M]>) => {
      if (when === "before") await hold(name);
      const answer = await (original as (...a: unknown[]) => Promise<unknown>)(...args);
      if (when === "after") await hold(name);
      return answer;
    }) as Collection<Doc>[M],
  );
  return {
    url,
    storage,
    holdNext() {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      next = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
      return { reached: reachedPromise, release };
    },
  };
}

/**
 * Starts `first` and, once `held` holds it, `second`; lets the first go on once the second has settled or
 * waits on a lock (the first's); answers what each of them answered, in that order.
 */
async function oneBehindTheOther<A, B>(held: Held, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  const { reached, release } = held.holdNext();
  const firstDone = first();
  await reached;
  const secondDone = second();
  await untilDoneOrWaitingOnALock(held.url, secondDone);
  release();
  return Promise.all([firstDone, secondDone]);
}

/** Settles once `work` has settled or one of the database's sessions waits on a lock (the held transaction's). */
async function untilDoneOrWaitingOnALock(url: string, work: Promise<unknown>): Promise<void> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      if (settled) return;
      const { rows } = await client.query<{ waiting: number }>(
        "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if (rows[0]!.waiting > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await client.end();
  }
}

describe("two transactions at once on PostgreSQL", () => {
  it("a Y reply and a STOP at once: the STOP stands, and no welcome text goes", async () => {
    const held = await heldStorage("subscriptions_subscriptions", "find");
    const t = await startTestKit({ storage: held.storage, config: { rateLimits: { "opt-in": 100 } } });
    try {
      await optIn(t, { user: { phone: PHONE } });
      await t.scheduler.flush();
      const to = (await t.kit.plugin("accounts").getCompany(t.company.companyId))!.senderNumber!;
      const subscriptions = t.kit.plugin("subscriptions");
      await oneBehindTheOther(
        held,
        () => subscriptions.handleInbound({ from: PHONE, to, body: "Y", messageId: "SM-Y" }),
        () => subscriptions.handleInbound({ from: PHONE, to, body: "STOP", messageId: "SM-STOP" }),
      );
      await t.scheduler.flush();
      assert.deepEqual(await eligibilityRows(t, "phone=%2B19148440001"), [["MARKETING", "TEXT", false]]);
      const texts = textsTo(t, PHONE);
      assert.ok(texts.some((text) => text.includes("You are unsubscribed")), texts.join("\n"));
      assert.ok(!texts.some((text) => text.includes("You are subscribed to")), texts.join("\n"));
    } finally {
      await t.stop();
    }
  });

  it("an authorization code redeemed twice at once: the second is refused and the token of the first revoked", async () => {
    const held = await heldStorage("oauth_authorization_codes", "findOne");
    const t = await startOAuthTestKit({ storage: held.storage });
    try {
      const code = await authorizedCode(t);
      const exchange = () => exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: t.app.clientId, client_secret: t.clientSecret });
      const answers = await oneBehindTheOther(held, exchange, exchange);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [400, 200],
        answers.map((answer) => answer.body).join("\n"),
      );
      assert.equal(answers[0]!.json<{ error: string }>().error, "invalid_grant");
      const token = answers[1]!.json<{ access_token: string }>().access_token;
      assert.equal((await t.request({ url: "/v1/me", token })).status, 401);
    } finally {
      await t.stop();
    }
  });

  it("the two owners of a company demoting each other at once: the second is refused, one owner stays", async () => {
    const held = await heldStorage("oauth_dashboard_users", "update", "before");
    const t = await startOAuthTestKit({ storage: held.storage });
    try {
      const users = t.kit.plugin("oauth").users;
      const { companyId } = t.company;
      const second = await users.create({ companyId, email: "second@acme.example", password: "a long enough password" });
      // The first is held once it has counted the owners, before it changes its role.
      const [, refused] = await oneBehindTheOther(
        held,
        () => users.setRole(companyId, t.user.id, "viewer"),
        () => users.setRole(companyId, second.id, "viewer").then(() => undefined, (error: unknown) => error),
      );
      assert.ok(refused instanceof LastOwnerError, String(refused));
      assert.deepEqual((await users.list(companyId)).filter((user) => user.role === "owner").map((user) => user.email), ["second@acme.example"]);
    } finally {
      await t.stop();
    }
  });

  it("two marketing texts to one person at once under a daily cap of 1: one is sent, the other capped", async () => {
    // Held at its first read of the sends, with the person held for the cap.
    const held = await heldStorage("send_rules_sends", "find");
    const t = await startJourneysKit({ storage: held.storage, sendRules: { dailyCap: 1 } });
    try {
      await t.subscribe(PHONE);
      const send = (n: number) =>
        t.kit.plugin("sendRules").send({ companyId: t.company.companyId, to: PHONE, messageType: "MARKETING", body: `Offer ${n}`, kind: "campaign", idempotencyKey: `campaign-${n}` });
      const outcomes = await oneBehindTheOther(held, () => send(1), () => send(2));
      assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ["sent", "skipped"]);
      await t.scheduler.flush();
      assert.equal(t.sms.sentTo(PHONE).filter((text) => text.body.startsWith("Offer")).length, 1);
    } finally {
      await t.stop();
    }
  });

  it("a purchase while the step job of a cart abandonment sends its text: the text, and the purchase finds the person's journey ended", async () => {
    const held = await heldStorage("journeys_enrollments", "getForUpdate");
    const t = await startJourneysKit({ storage: held.storage });
    try {
      const journey = await t.createJourney({ template: "cart_abandonment" });
      await t.subscribe(PHONE);
      await t.event("ecommerce/add-to-cart", PHONE, items("mug", "mug-blue"));
      // The step job, an hour after the cart, held once it has read the person's enrollment.
      await oneBehindTheOther(
        held,
        () => t.scheduler.advance(60 * 60_000),
        () => t.event("ecommerce/purchase", PHONE, { ...items("mug", "mug-blue"), orderId: "A-1" }),
      );
      const stats = await t.stats(journey.id);
      assert.deepEqual([stats.sent, stats.exited.purchased ?? 0], [1, 0]);
      assert.equal((await t.journeyTexts(PHONE)).length, 1);
    } finally {
      await t.stop();
    }
  });

  it("a reminder cancelled while its reminder text is being sent: the text, then the cancellation, and the reminder stays cancelled", async () => {
    const held = await heldStorage("reachkit_outbox", "findOne");
    const t = await startAppointmentsKit({ storage: held.storage });
    try {
      const { uuid } = ok(await createReminder(t, adaReminder(await typeWithMessages(t, ALL_MESSAGES))));
      // The confirmation's drain ends first (its last read is an outbox findOne too).
      await t.scheduler.flush();
      // The REMINDER step's job, three hours before the 15:00 appointment in New York, held in its send.
      const [, cancel] = await oneBehindTheOther(
        held,
        () => advanceTo(t, "2026-03-08T16:00:00.000Z"),
        () => tactical(t, "POST", `/events/reminders/${uuid}/cancel`),
      );
      assert.equal(ok(cancel).state, "canceled");
      await t.scheduler.flush();
      const reminder = ok(await tactical(t, "GET", `/events/reminders/${uuid}`));
      assert.deepEqual([reminder.state, reminder.steps.REMINDER.status, reminder.steps.FOLLOW_UP.status], ["canceled", "sent", "canceled"]);
      assert.deepEqual(appointmentTexts(t), [
        "Hi Ada, your haircut is booked for Sunday, March 8, 2026 at 3:00 PM.",
        "Reminder: haircut at 3:00 PM today.",
        "Your haircut on Sunday, March 8, 2026 is canceled.",
      ]);
    } finally {
      await t.stop();
    }
  });

  it("a campaign cancelled while a page of it is being sent: that page goes, the rest is cancelled, and the campaign stays cancelled", async () => {
    const held = await heldStorage("campaigns_recipients", "find");
    const t = await startCampaignsKit({ storage: held.storage, sendPageSize: 2 });
    try {
      const phones = ["+19148440001", "+19148440002", "+19148440003", "+19148440004"];
      for (const phone of phones) await t.person(phone, { tier: "gold" });
      const segmentId = await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } });
      const campaign = await t.ok("POST", "/v1/campaigns", { name: "Now", segmentId, channel: "sms", text: "Now" }, 201);
      await t.ok("POST", `/v1/campaigns/${campaign.id}/send`, {});
      const sender = t.kit.resolve(CAMPAIGN_SENDER);
      await sender.readAudience({ campaignId: campaign.id });
      // The first send page of two, held once it has read its recipients.
      const [, cancel] = await oneBehindTheOther(
        held,
        () => sender.send({ campaignId: campaign.id }),
        () => t.request({ method: "POST", url: `/v1/campaigns/${campaign.id}/cancel` }),
      );
      assert.equal(cancel.status, 200);
      await t.scheduler.flush();
      const results = await t.ok("GET", `/v1/campaigns/${campaign.id}/results`);
      assert.deepEqual([results.status, results.sent, results.cancelled], ["cancelled", 2, 2]);
      assert.equal((await Promise.all(phones.map((phone) => t.texts(phone)))).flat().length, 2);
    } finally {
      await t.stop();
    }
  });

  it("two texts of one kind to one person at once, one per kind within a minute: one goes, the other is suppressed", async () => {
    const held = await heldStorage("reachkit_outbox", "findOne");
    const t = await startTestKit({ storage: held.storage });
    try {
      const text = (body: string) => () => t.kit.outbox.send({ companyId: t.company.companyId, to: PHONE, body, kind: "already_unsubscribed", onePerKindWithinMs: 60_000 });
      // The first is held once it has looked for a text of its kind sent within the minute.
      const stored = await oneBehindTheOther(held, text("first"), text("second"));
      assert.deepEqual(stored.map((message) => message.status).sort(), ["queued", "suppressed"]);
      await t.scheduler.flush();
      assert.equal(textsTo(t, PHONE).length, 1);
    } finally {
      await t.stop();
    }
  });

  it("two privacy requests of a company at once: numbered 1 and 2, both accepted", async () => {
    const held = await heldStorage("privacy_requests", "findOne");
    const t = await startPrivacyKit({ storage: held.storage });
    try {
      const post = (subjectPhone: string) => t.request({ method: "POST", url: "/privacy/delete-request", body: { subjectPhone }, token: t.company.legacyToken });
      const answers = await oneBehindTheOther(held, () => post("+19148440001"), () => post("+19148440002"));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [202, 202],
        answers.map((answer) => answer.body).join("\n"),
      );
      assert.deepEqual(answers.map((answer) => t.json(answer).id).sort(), [1, 2]);
    } finally {
      await t.stop();
    }
  });
});

describe("the job runner beside transactions on PostgreSQL", () => {
  it("sends a text queued in a transaction that commits after a wake of the runner", async () => {
    const t = await startTestKit({ storage: postgresStorage({ url: await cluster.createDatabase(template), poolSize: 4 }) });
    try {
      let queued!: () => void;
      let commit!: () => void;
      const inTransaction = new Promise<void>((resolve) => (queued = resolve));
      const committing = new Promise<void>((resolve) => (commit = resolve));
      const transaction = t.kit.storage.transaction(async () => {
        await t.kit.outbox.send({ companyId: t.company.companyId, to: PHONE, body: "Your order shipped", kind: "shipping" });
        queued();
        await committing;
      });
      await inTransaction;
      // A wake while the text's job is not committed yet: its claim, on a connection of its own, does not see it.
      await t.scheduler.flush();
      commit();
      await transaction;
      await t.scheduler.flush();
      assert.deepEqual(textsTo(t, PHONE), ["Your order shipped"]);
    } finally {
      await t.stop();
    }
  });
});
