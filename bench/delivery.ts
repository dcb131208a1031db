// bench:delivery — texts through the Twilio adapter to a local Messages API.
//   1. Throughput: rounds of queued texts delivered by a kit (SQLite outbox, durable jobs, Twilio adapter)
//      beside a bare loop posting the adapter's very requests (same forms, same headers) with the same HTTP
//      client (the twilio library's RequestClient) at the same concurrency, alternated; messages per second
//      and CPU per message. docs/delivery-throughput.md: where a text's CPU goes, and the figures.
//   2. A sender limited to 30 texts a second, held for 60 s: the rate measured over the window.
//   3. The self-hosted server killed with SIGKILL half-way through a backlog, then restarted:
//      texts sent twice and texts lost, counted at the Messages API.
//   4. The kit alone: its CPU per text with a sender that takes each text on the next turn of the event
//      loop (no HTTP), the part of part 1's figure that is the kit's own, steadier than the ratio under load.
// BENCH_CPU_PROFILE=<dir> writes a CPU profile of each measured side of part 1 and of each round of part 4 there
// (the queueing and the other parts left out); the sampling slows both sides, so its rounds' figures are not the bench's.
// Every figure is printed with the load average; JSON goes to bench/results/delivery.json.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import type twilioSdk from "twilio";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { messagesApiHeaders, twilioSms } from "../adapters/sms/twilio/index.ts";
import { accountsPlugin } from "../plugins/accounts/index.ts";
import { createReachkit, silentLogger, systemClock, type Reachkit, type SmsSender } from "../src/index.ts";
import { MessagesApi, TEST_ACCOUNT_SID, TEST_AUTH_TOKEN } from "../test/support/messages-api.ts";
import { createServerKit } from "../server/server-kit.ts";
import { startExampleProcess } from "../test/support/example-process.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";
import { profiled } from "./cpu-profile.ts";
import { withSqliteCommitsCounted } from "./sqlite-commits.ts";
import { report, startServerProcess, stopServerProcess } from "./support.ts";

const TOTAL = Number(process.env.BENCH_TEXTS ?? 20_000);
const ROUNDS = 4;
const CONCURRENCY = 8;
const RATE_LIMIT = 30;
const RATE_WINDOW_S = Number(process.env.BENCH_RATE_SECONDS ?? 60);
const CRASH_TEXTS = Number(process.env.BENCH_CRASH_TEXTS ?? 1_000);
const CRASH_RATE = 200;
const KIT_TEXTS = Number(process.env.BENCH_KIT_TEXTS ?? 10_000);
const KIT_ROUNDS = 3;
const SECRET = "bench-secret-bench-secret-bench-secret-0";
const FROM = "+15550001111";
const twilio = createRequire(import.meta.url)("twilio") as typeof twilioSdk;
const load = () => loadavg().map((value) => Number(value.toFixed(2)));
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
/**
 * Bytes this process has handed to write calls (Linux's /proc/self/io `wchar`): SQLite's WAL frames and
 * checkpoints, and the requests. Steadier under load than CPU; undefined where the file is missing.
 */
const bytesWritten = (): number | undefined => {
  try {
    return Number(/^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);
  } catch {
    return undefined;
  }
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const phone = (index: number) => `+1914${String(5_000_000 + index).padStart(7, "0")}`;

interface Round {
  side: "reachkit" | "bare";
  texts: number;
  perSecond: number;
  cpuMicrosPerText: number;
  /** SQLite commits that wrote, per text (the kit's side; none on the bare loop's). */
  commitsPerText?: number;
  /** Bytes handed to write calls per text (`bytesWritten`). */
  bytesWrittenPerText?: number;
  load: number[];
}

const twilioAt = (apiUrl: string): SmsSender => twilioSms({ accountSid: TEST_ACCOUNT_SID, authToken: TEST_AUTH_TOKEN, publicUrl: "http://127.0.0.1:3000", apiUrl });

/** A provider that takes each text on the next turn of the event loop. */
function instantSms(): SmsSender {
  let taken = 0;
  return {
    name: "instant",
    async send() {
      await new Promise((resolve) => setImmediate(resolve));
      return { providerMessageId: `SM${++taken}` };
    },
  };
}

function benchKit(dataDir: string, sms: SmsSender, ratePerSecond: number): Reachkit {
  return createReachkit({
    storage: sqliteStorage({ filename: join(dataDir, "reachkit.db") }),
    scheduler: nodeScheduleScheduler(),
    clock: systemClock(),
    sms,
    logger: silentLogger(),
    secret: SECRET,
    plugins: [accountsPlugin()],
    config: { messaging: { ratePerSecond, defaultSender: FROM, sendsAtOnce: CONCURRENCY }, jobs: { concurrency: CONCURRENCY }, rateLimits: { default: Infinity } },
  });
}

/** Queues texts with the kit's jobs stopped, so that the measured part is their delivery. */
async function queue(dataDir: string, sms: SmsSender, count: number, offset: number): Promise<void> {
  const kit = benchKit(dataDir, sms, Infinity);
  await kit.start({ runJobs: false });
  const companyId = (await kit.plugin("accounts").listCompanies())[0]?.id ?? (await kit.provisionCompany({ name: "Bench" })).company.id;
  for (let index = 0; index < count; index += 500) {
    await kit.storage.transaction(async () => {
      for (let i = index; i < Math.min(count, index + 500); i++) {
        await kit.outbox.send({ companyId, to: phone(offset + i), body: `Bench text ${offset + i}: your order has shipped.`, kind: "bench" });
      }
    });
  }
  await kit.stop();
}

/** Starts the kit's jobs on a queued backlog and waits until `count` texts are sent. */
async function deliver(dataDir: string, sms: SmsSender, count: number, ratePerSecond = Infinity): Promise<{ seconds: number; cpu: number; commits: number; written: number | undefined; sentAt: number[] }> {
  const kit = benchKit(dataDir, sms, ratePerSecond);
  const sentAt: number[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  kit.events.on("message.status_changed", (event) => {
    if (event.status === "sent" && sentAt.push(performance.now()) === count) done();
  });
  const started = performance.now();
  const cpu = cpuMicros();
  const written = bytesWritten();
  const { commits } = await withSqliteCommitsCounted(async () => {
    await kit.start();
    await finished;
  });
  const writtenAfter = bytesWritten();
  const result = {
    seconds: (performance.now() - started) / 1000,
    cpu: cpuMicros() - cpu,
    commits,
    written: written !== undefined && writtenAfter !== undefined ? writtenAfter - written : undefined,
    sentAt: sentAt.map((at) => at - started),
  };
  await kit.stop();
  return result;
}

/** The adapter's requests (same forms, same headers) posted with the same client, `CONCURRENCY` at a time; each answer's sid read as the adapter reads it. */
async function bareLoop(apiUrl: string, count: number, offset: number): Promise<{ seconds: number; cpu: number; written: number | undefined }> {
  const client = new twilio.RequestClient();
  const uri = `${apiUrl}/2010-04-01/Accounts/${TEST_ACCOUNT_SID}/Messages.json`;
  const headers = messagesApiHeaders();
  let next = 0;
  const started = performance.now();
  const cpu = cpuMicros();
  const written = bytesWritten();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = offset + next++;
        const response = await client.request({
          method: "post",
          uri,
          username: TEST_ACCOUNT_SID,
          password: TEST_AUTH_TOKEN,
          headers,
          data: { To: phone(index), From: FROM, Body: `Bench text ${index}: your order has shipped.`, StatusCallback: `http://127.0.0.1:3000/sms/status/bench-${index}` },
        });
        if (response.statusCode !== 201) throw new Error(`the Messages API answered ${response.statusCode}`);
        const created = (typeof response.body === "string" ? JSON.parse(response.body) : response.body) as { sid?: unknown };
        if (typeof created.sid !== "string") throw new Error("the Messages API answered without a message sid");
      }
    }),
  );
  const writtenAfter = bytesWritten();
  return { seconds: (performance.now() - started) / 1000, cpu: cpuMicros() - cpu, written: written !== undefined && writtenAfter !== undefined ? writtenAfter - written : undefined };
}

async function throughput(apiUrl: string): Promise<Record<string, unknown>> {
  const perRound = Math.ceil(TOTAL / ROUNDS);
  const rounds: Round[] = [];
  // Warm-up of both sides (JIT, connections), not counted.
  const warmDir = temporaryDirectory("bench-delivery");
  await queue(warmDir, twilioAt(apiUrl), 500, 0);
  await deliver(warmDir, twilioAt(apiUrl), 500);
  await bareLoop(apiUrl, 500, 0);
  for (let round = 0; round < ROUNDS; round++) {
    const dataDir = temporaryDirectory("bench-delivery");
    await queue(dataDir, twilioAt(apiUrl), perRound, round * perRound);
    const sides = round % 2 === 0 ? (["reachkit", "bare"] as const) : (["bare", "reachkit"] as const);
    for (const side of sides) {
      const { seconds, cpu, commits, written } = await profiled(`${side}-${round}`, async () =>
        side === "reachkit" ? deliver(dataDir, twilioAt(apiUrl), perRound) : { ...(await bareLoop(apiUrl, perRound, round * perRound)), commits: undefined },
      );
      const figures: Round = {
        side,
        texts: perRound,
        perSecond: Math.round(perRound / seconds),
        cpuMicrosPerText: Math.round(cpu / perRound),
        ...(commits !== undefined ? { commitsPerText: Number((commits / perRound).toFixed(2)) } : {}),
        ...(written !== undefined ? { bytesWrittenPerText: Math.round(written / perRound) } : {}),
        load: load(),
      };
      rounds.push(figures);
      console.error(JSON.stringify(figures));
    }
  }
  const of = (side: Round["side"]) => rounds.filter((round) => round.side === side);
  const ratios = of("reachkit").map((round, index) => round.perSecond / of("bare")[index]!.perSecond);
  return {
    texts: perRound * ROUNDS,
    concurrency: CONCURRENCY,
    reachkitPerSecond: median(of("reachkit").map((round) => round.perSecond)),
    barePerSecond: median(of("bare").map((round) => round.perSecond)),
    reachkitCpuMicrosPerText: median(of("reachkit").map((round) => round.cpuMicrosPerText)),
    bareCpuMicrosPerText: median(of("bare").map((round) => round.cpuMicrosPerText)),
    reachkitCommitsPerText: median(of("reachkit").map((round) => round.commitsPerText ?? 0)),
    reachkitBytesWrittenPerText: median(of("reachkit").map((round) => round.bytesWrittenPerText ?? 0)),
    bareBytesWrittenPerText: median(of("bare").map((round) => round.bytesWrittenPerText ?? 0)),
    ratioPerRound: ratios.map((ratio) => Number(ratio.toFixed(2))),
    ratioMedian: Number(median(ratios).toFixed(2)),
    target: 0.7,
    rounds,
  };
}

async function heldRate(apiUrl: string): Promise<Record<string, unknown>> {
  const dataDir = temporaryDirectory("bench-delivery-rate");
  // More than the window can send, so the limiter, not the backlog, sets the pace.
  const backlog = RATE_LIMIT * RATE_WINDOW_S + RATE_LIMIT * 5;
  await queue(dataDir, twilioAt(apiUrl), backlog, 1_000_000);
  const kit = benchKit(dataDir, twilioAt(apiUrl), RATE_LIMIT);
  const sentAt: number[] = [];
  kit.events.on("message.status_changed", (event) => void (event.status === "sent" && sentAt.push(performance.now())));
  const loadBefore = load();
  await kit.start();
  await new Promise((resolve) => setTimeout(resolve, (RATE_WINDOW_S + 1) * 1000));
  await kit.stop();
  // The window starts at the first send; the limiter's first second may hold its whole allowance at once.
  const first = sentAt[0]!;
  const inWindow = sentAt.filter((at) => at - first < RATE_WINDOW_S * 1000);
  const perSecond = inWindow.length / RATE_WINDOW_S;
  return {
    limit: RATE_LIMIT,
    windowSeconds: RATE_WINDOW_S,
    sent: inWindow.length,
    perSecond: Number(perSecond.toFixed(2)),
    deviation: Number((perSecond / RATE_LIMIT - 1).toFixed(4)),
    target: "within ±5%",
    load: { before: loadBefore, after: load() },
  };
}

async function killHalfWay(): Promise<Record<string, unknown>> {
  const api = await new MessagesApi().start();
  // Answered 100 ms after a text is taken: the kill leaves texts whose outcome the server never learned.
  api.answerDelayMs = 100;
  const dataDir = temporaryDirectory("bench-delivery-crash");
  const env = {
    REACHKIT_DATA_DIR: dataDir,
    REACHKIT_SECRET: SECRET,
    REACHKIT_SMS: "twilio",
    TWILIO_ACCOUNT_SID: api.accountSid,
    TWILIO_AUTH_TOKEN: api.authToken,
    REACHKIT_TWILIO_API_URL: api.url,
    REACHKIT_SMS_PER_SECOND: String(CRASH_RATE),
  };
  // The backlog is queued in the server's own database before it starts, with the server's rate (its sender's drain
  // sends at that rate).
  const kit = createServerKit({ dataDir, publicUrl: "http://127.0.0.1:3000", secret: SECRET, logger: silentLogger(), config: { messaging: { ratePerSecond: CRASH_RATE } } });
  await kit.start({ runJobs: false });
  const { company } = await kit.provisionCompany({ name: "Bench" });
  for (let index = 0; index < CRASH_TEXTS; index += 500) {
    await kit.storage.transaction(async () => {
      for (let i = index; i < Math.min(CRASH_TEXTS, index + 500); i++) await kit.outbox.send({ companyId: company.id, to: phone(2_000_000 + i), body: `Crash text ${i}`, kind: "bench" });
    });
  }
  await kit.stop();
  let server = await startExampleProcess("server/main.ts", env);
  while (api.messages.length < CRASH_TEXTS / 2) await new Promise((resolve) => setTimeout(resolve, 5));
  const takenAtKill = api.messages.length;
  await server.crash();
  const unanswered = api.messages.length - takenAtKill;
  server = await startExampleProcess("server/main.ts", env);
  const deadline = Date.now() + 120_000;
  const reached = () => new Set(api.messages.map((message) => message.statusCallback)).size;
  while (reached() < CRASH_TEXTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  // Time for a duplicate to show, if the restart were to send one.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await server.stop();
  await api.close();
  const callbacks = api.messages.map((message) => message.statusCallback);
  return {
    texts: CRASH_TEXTS,
    takenBeforeKill: takenAtKill,
    takenWhileDying: unanswered,
    reachedApi: new Set(callbacks).size,
    sentTwice: callbacks.length - new Set(callbacks).size,
    lost: CRASH_TEXTS - new Set(callbacks).size,
    load: load(),
  };
}

/** The kit's CPU per text with `instantSms`: a warm-up round, then the median of KIT_ROUNDS. */
async function kitAlone(): Promise<Record<string, unknown>> {
  const sms = instantSms();
  const perText: number[] = [];
  for (let round = 0; round <= KIT_ROUNDS; round++) {
    const dataDir = temporaryDirectory("bench-delivery-kit");
    const count = round === 0 ? 1_000 : KIT_TEXTS;
    await queue(dataDir, sms, count, 3_000_000 + round * KIT_TEXTS);
    const { cpu } = await (round === 0 ? deliver(dataDir, sms, count) : profiled(`kit-alone-${round}`, () => deliver(dataDir, sms, count)));
    if (round > 0) perText.push(Math.round(cpu / count));
  }
  return { texts: KIT_TEXTS, cpuMicrosPerTextPerRound: perText, cpuMicrosPerText: median(perText), load: load() };
}

const apiProcess = await startServerProcess(join(import.meta.dirname, "servers/messages-api.ts"), {});
const apiUrl = `http://127.0.0.1:${apiProcess.port}`;
try {
  const figures: Record<string, unknown> = { loadAtStart: load() };
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "throughput") figures.throughput = await throughput(apiUrl);
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "rate") figures.rateLimit = await heldRate(apiUrl);
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "crash") figures.killHalfWay = await killHalfWay();
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "kit") figures.kitAlone = await kitAlone();
  figures.loadAtEnd = load();
  report("delivery", figures);
} finally {
  await stopServerProcess(apiProcess.child);
}
