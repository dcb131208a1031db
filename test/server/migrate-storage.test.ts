import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { migrateStorage } from "../../server/migrate-storage.ts";
import { createServerKit } from "../../server/server-kit.ts";
import { dataDirSecret } from "../../server/config.ts";
import { runCli, silentLogger, type Doc } from "../../src/index.ts";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import type { Json } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

let cluster: PostgresCluster;
before(async () => {
  cluster = await startPostgres();
});
after(() => cluster.stop());

async function migrate(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await runCli(["migrate-storage", ...args], {
    commands: [migrateStorage],
    defaultDataDir: "./data",
    stdout: (text) => void (out += text),
    stderr: (text) => void (out += text),
    openKit: () => Promise.reject(new Error("migrate-storage opens its own kits")),
  });
  return { code, out };
}

it("reachkit migrate-storage copies a SQLite data directory into PostgreSQL, where the same credentials and data serve", { timeout: 60_000 }, async () => {
  const dataDir = temporaryDirectory("migrate");
  const options = { dataDir, publicUrl: "http://localhost:3000", secret: dataDirSecret(dataDir), logger: silentLogger() };
  const sqlite = createServerKit(options);
  await sqlite.start({ runJobs: false });
  const company = (await sqlite.provisionCompany({ name: "Acme" })).output as { apiKey: string };
  const optIn = await sqlite.inject({
    method: "POST",
    url: "/v1/subscriptions",
    headers: { authorization: `Bearer ${company.apiKey}` },
    body: { user: { phone: "+19148440001", email: "ada@example.com" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" },
  });
  assert.equal(optIn.status, 202);
  const jobs = await sqlite.storage.collection<Doc>("reachkit_jobs").count();
  assert.ok(jobs > 0, "the opt-in's job is queued");
  await sqlite.stop();

  const url = await cluster.createDatabase();
  const { code, out } = await migrate("--from", `sqlite:${dataDir}`, "--to", url, "--json");
  assert.equal(code, 0, out);
  const copied = (JSON.parse(out) as Json).collections as { collection: string; documents: number }[];
  assert.equal(copied.find((c) => c.collection === "reachkit_jobs")?.documents, jobs);

  // With its job runner: the opt-in job queued on SQLite runs on PostgreSQL.
  const postgres = createServerKit({ ...options, databaseUrl: url });
  await postgres.start();
  try {
    assert.equal(postgres.storage.name, "postgres");
    const me = await postgres.inject({ method: "GET", url: "/v1/me", headers: { authorization: `Bearer ${company.apiKey}` } });
    assert.equal(me.status, 200);
    assert.equal((JSON.parse(me.body) as Json).companyName, "Acme");
    const eligibility = () =>
      postgres.inject({ method: "GET", url: "/v1/subscriptions?email=ada%40example.com", headers: { authorization: `Bearer ${company.apiKey}` } });
    for (let wait = 0; wait < 100 && !(await eligibility()).body.includes("EMAIL"); wait++) await new Promise((r) => setTimeout(r, 100));
    assert.match((await eligibility()).body, /"channel":"EMAIL"/);
    assert.ok((await postgres.storage.collection<Doc>("reachkit_jobs").count()) >= jobs);
  } finally {
    await postgres.stop();
  }

  // Into a database that already holds data: refused, nothing merged.
  const again = await migrate("--from", `sqlite:${dataDir}`, "--to", url);
  assert.equal(again.code, 1);
  assert.match(again.out, /already holds/);
  assert.equal((await migrate("--from", dataDir, "--to", url)).code, 2);
  assert.equal((await migrate("--from", `sqlite:${dataDir}`, "--to", "mysql://x")).code, 2);
  assert.equal((await migrate("--from", `sqlite:${join(dataDir, "nowhere")}`, "--to", url)).code, 2);
});
