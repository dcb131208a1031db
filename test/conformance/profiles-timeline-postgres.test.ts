import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { postgresStorage } from "../../adapters/storage/postgres/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { PHONE, profileOf, startProfilesKit } from "../plugins/profiles/support.ts";

let cluster: PostgresCluster;
before(async () => {
  cluster = await startPostgres();
});
after(() => cluster.stop());

describe("a profile's timeline on PostgreSQL", () => {
  it("reads a page by walking the (profileId, seq) index backwards: no bitmap scan, no full sort, with or without statistics", async () => {
    const url = await cluster.createDatabase();
    const t = await startProfilesKit({ storage: postgresStorage({ url, poolSize: 2 }) });
    const profiles = t.kit.plugin("profiles");
    const companyId = t.company.companyId;
    await profiles.recordCustomEvent(companyId, { type: "Viewed", user: { phone: PHONE } });
    const profile = (await profileOf(t, "phone", PHONE))!;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // 100,000 events of 1,000 other people of the company, as the planner finds them before ANALYZE has run.
      await client.query(`INSERT INTO profiles_events (id, doc)
        SELECT 'e' || n, doc || jsonb_build_object('id', 'e' || n, 'profileId', 'p' || (n % 1000), 'seq', lpad(n::text, 13, '0') || 'e' || n)
        FROM profiles_events, generate_series(1, 100000) AS n`);
      const texts: string[] = [];
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string } | undefined)?.text;
        if (text !== undefined) texts.push(text);
        return (query as (...args: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      let page;
      try {
        page = await profiles.events(companyId, profile.id, { first: 10 });
      } finally {
        pg.Client.prototype.query = query;
      }
      assert.deepEqual(page.events.map((event) => event.type), ["Viewed"]);
      const read = texts.find((text) => text.includes(`FROM "profiles_events"`))!;
      // The profile, the company where the statement names it (the read has no need to), and the LIMIT.
      const parameters = (read.match(/\$\d+/g) ?? []).length === 3 ? [profile.id, companyId, 11] : [profile.id, 11];
      // Before statistics exist, and after ANALYZE (when a condition outside the index made it sort all the person's events).
      for (const analyze of [false, true]) {
        if (analyze) await client.query("ANALYZE profiles_events");
        const plan = (await client.query(`EXPLAIN ${read}`, parameters)).rows.map((row: Record<string, string>) => row["QUERY PLAN"]!.trim());
        assert.ok(plan.some((step) => step.includes(`Index Scan Backward using "ix_profiles_events__profileId__seq"`)), plan.join("\n"));
        assert.ok(!plan.some((step) => /^(->\s+)?(Sort\s+\(|Bitmap|Parallel|Seq Scan)/.test(step)), plan.join("\n"));
      }
    } finally {
      await client.end();
      await t.stop();
    }
  });
});
