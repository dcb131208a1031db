// Appointment reminders at scale on SQLite, each figure beside a baseline measured in the same run:
//   1. creation rate: <count> reminders spread over 30 days, POST /events/reminders through the kit (in process,
//      16 in flight, rate limits lifted), each also queuing its confirmation through the outbox and planning its
//      REMINDER and FOLLOW_UP jobs; beside JSON.parse + better-sqlite3 inserts of the same rows, with their indexed
//      columns, in reachkit's tables (no checks);
//   2. RSS growth once they are created (and every confirmation sent), beside one node-schedule timer per pending send;
//   3. time for a fresh kit to start on that database, beside the same kit on a database without reminders;
//   4. lateness (send time − due time, p50 and p99) of <burst> reminders falling due in the same minute, with the
//      real node-schedule scheduler and system clock, on the database of step 1: spread evenly over the minute, and
//      all at one instant; beside <burst> node-schedule timers at one instant.
// Every phase runs in a fresh process (bench/reminder-phases.ts) so memory and start-up are its own.
// Usage: npm run bench:reminders [-- count [burst]]   (default 100000 and 1000)
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { report } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const count = Number(process.argv[2] ?? 100_000);
const burst = Number(process.argv[3] ?? 1_000);
/** Creation: the runner's default concurrency; no per-sender limit, so every confirmation is out before memory is read. */
const CREATE_SETTINGS = { concurrency: 4, ratePerSecond: Infinity };
const LATENESS_RUNS = [
  { spread: "minute", concurrency: 4, ratePerSecond: 10, note: "defaults: at 10 texts/s per sender, 1,000 in a minute queue up" },
  { spread: "minute", concurrency: 16, ratePerSecond: 100, note: "a short code's rate" },
  { spread: "instant", concurrency: 16, ratePerSecond: Infinity, note: "no provider limit: reachkit's own throughput" },
] as const;

async function phase(...args: Array<string | number>): Promise<Record<string, unknown>> {
  const script = join(import.meta.dirname, "reminder-phases.ts");
  const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", script, ...args.map(String)], {
    env: { ...process.env, NODE_ENV: "production" },
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.split("\n").find((text) => text.startsWith("RESULT "));
  if (!line) throw new Error(`phase ${args[0]} printed no result:\n${stdout}`);
  return JSON.parse(line.slice("RESULT ".length)) as Record<string, unknown>;
}

const dataDir = temporaryDirectory("bench-reminders");
const emptyDir = temporaryDirectory("bench-reminders-empty");

const created = await phase("create", dataDir, count, CREATE_SETTINGS.concurrency, CREATE_SETTINGS.ratePerSecond);
const bareCreated = await phase("bare-create", dataDir, count);
const timers = await phase("timers", 2 * count);
await phase("create", emptyDir, 0, CREATE_SETTINGS.concurrency, CREATE_SETTINGS.ratePerSecond);
const started = await phase("start", dataDir);
const startedEmpty = await phase("start", emptyDir);
const lateness = [];
for (const run of LATENESS_RUNS) lateness.push({ ...(await phase("lateness", dataDir, burst, run.concurrency, run.ratePerSecond, run.spread)), note: run.note });
const bareLateness = await phase("bare-lateness", burst);

const { companyId: _companyId, legacyToken: _legacyToken, ...creation } = created;
report("reminders", {
  reminders: count,
  burst,
  creation: {
    settings: { ...CREATE_SETTINGS, inFlight: 16, rateLimits: "lifted" },
    reachkit: creation,
    bare: { what: "JSON.parse + better-sqlite3 inserts of the reminder, 3 jobs and the outbox row with their indexed columns, one transaction each", ...bareCreated },
    ratio: Math.round(((created.remindersPerSecond as number) / (bareCreated.remindersPerSecond as number)) * 100) / 100,
  },
  memory: {
    reachkitRssGrowthMb: created.rssGrowthMb,
    reachkitPendingSends: created.pendingSends,
    perReminderTimersBaseline: { what: `one node-schedule job per pending send (${2 * count})`, ...timers },
    target: "RSS growth under 100 MB",
  },
  startup: { reachkit: started, emptyDatabaseBaseline: startedEmpty, target: "under 2 s" },
  lateness: { reachkit: lateness, bareTimersBaseline: bareLateness, target: "p99 under 1 s" },
});
