import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import type { Collection, Doc, Storage } from "../../src/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { withCollectionMethod } from "../support/storage-wrappers.ts";
import { prepareTemplate } from "../support/test-storage.ts";
import { authorizedCode, exchangeCode, REDIRECT_URI, startOAuthTestKit } from "../support/oauth.ts";
import { startTestKit } from "../support/test-kit.ts";
import { startJourneysKit } from "../plugins/journeys/support.ts";
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
  /** Holds the next call of the method, once it has answered, until `release`; `reached` settles when it is held. */
  holdNext(): { reached: Promise<void>; release: () => void };
}

/** A PostgreSQL storage on a fresh database whose `method` on `collection` can be held after its answer. */
async function heldAfter<M extends "find" | "findOne" | "count">(collection: string, method: M): Promise<Held & { url: string }> {
  const url = await cluster.createDatabase(template);
  let next: { reached: () => void; released: Promise<void> } | undefined;
  const storage = withCollectionMethod(postgresStorage({ url, poolSize: 4 }), method, (original, name) =>
    (async (...args: Parameters<Collection<Doc>[M]>) => {
      const answer = await (original as (...a: unknown[]) => Promise<unknown>)(...args);
      const hold = name === collection ? next : undefined;
      if (hold) {
        next = undefined;
        hold.reached();
        await hold.released;
      }
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
    const held = await heldAfter("subscriptions_subscriptions", "find");
    const t = await startTestKit({ storage: held.storage, config: { rateLimits: { "opt-in": 100 } } });
    try {
      await optIn(t, { user: { phone: PHONE } });
      await t.scheduler.flush();
      const to = (await t.kit.plugin("accounts").getCompany(t.company.companyId))!.senderNumber!;
      const subscriptions = t.kit.plugin("subscriptions");
      const { reached, release } = held.holdNext();
      const confirm = subscriptions.handleInbound({ from: PHONE, to, body: "Y", messageId: "SM-Y" });
      await reached;
      const stop = subscriptions.handleInbound({ from: PHONE, to, body: "STOP", messageId: "SM-STOP" });
      await untilDoneOrWaitingOnALock(held.url, stop);
      release();
      await Promise.all([confirm, stop]);
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
    const held = await heldAfter("oauth_authorization_codes", "findOne");
    const t = await startOAuthTestKit({ storage: held.storage });
    try {
      const code = await authorizedCode(t);
      const exchange = () => exchangeCode(t, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: t.app.clientId, client_secret: t.clientSecret });
      const { reached, release } = held.holdNext();
      const first = exchange();
      await reached;
      const second = exchange();
      await untilDoneOrWaitingOnALock(held.url, second);
      release();
      const answers = await Promise.all([first, second]);
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

  it("two marketing texts to one person at once under a daily cap of 1: one is sent, the other capped", async () => {
    const held = await heldAfter("send_rules_sends", "count");
    const t = await startJourneysKit({ storage: held.storage, sendRules: { dailyCap: 1 } });
    try {
      await t.subscribe(PHONE);
      const send = (n: number) =>
        t.kit.plugin("sendRules").send({ companyId: t.company.companyId, to: PHONE, messageType: "MARKETING", body: `Offer ${n}`, kind: "campaign", idempotencyKey: `campaign-${n}` });
      const { reached, release } = held.holdNext();
      const first = send(1);
      await reached;
      const second = send(2);
      await untilDoneOrWaitingOnALock(held.url, second);
      release();
      const outcomes = await Promise.all([first, second]);
      assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ["sent", "skipped"]);
      await t.scheduler.flush();
      assert.equal(t.sms.sentTo(PHONE).filter((text) => text.body.startsWith("Offer")).length, 1);
    } finally {
      await t.stop();
    }
  });

  it("two privacy requests of a company at once: numbered 1 and 2, both accepted", async () => {
    const held = await heldAfter("privacy_requests", "findOne");
    const t = await startPrivacyKit({ storage: held.storage });
    try {
      const post = (subjectPhone: string) => t.request({ method: "POST", url: "/privacy/delete-request", body: { subjectPhone }, token: t.company.legacyToken });
      const { reached, release } = held.holdNext();
      const first = post("+19148440001");
      await reached;
      const second = post("+19148440002");
      await untilDoneOrWaitingOnALock(held.url, second);
      release();
      const answers = await Promise.all([first, second]);
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
