// bench:webhooks-kit-cost: the kit's own CPU a webhook delivery, with every receiver's answer given in process.
// bench/webhooks.ts measures deliveries to real receivers, where HTTP is most of a delivery's CPU and the machine's
// drift between rounds moves each side's rate by a quarter: a change to the kit's own work of a microsecond or two a
// delivery is lost in it. Here the sender answers each POST with 200 on the next turn of the event loop (no socket,
// no receivers' process), so what is left is what the kit adds to the HTTP: reading the due rows, signing, the
// drains and lanes, the outcomes' writes and their commits. Beside it, in alternated rounds, a bare loop does the
// rest of that work by the fastest plain means (each body signed as bench/webhooks-bare.ts signs it, then the same
// turn of the event loop as the answer, with the same concurrency per receiver); their difference, per round, is
// the kit's own cost. Same emission phase as bench:webhooks (a kit with its jobs stopped records the events, each
// in its own transaction); the timed window runs from a second kit's start until every delivery is answered.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../plugins/accounts/index.ts";
import { DEFAULT_WEBHOOKS_SETTINGS, DeliverySender, WEBHOOK_SENDER, webhooksPlugin, type AttemptResult } from "../plugins/webhooks/index.ts";
import { createReachkit, silentLogger, type ReachkitPlugin } from "../src/index.ts";
import { profiled } from "./cpu-profile.ts";
import { report } from "./support.ts";
import { mainThreadCpuMicros } from "./thread-cpu.ts";
import { signedHeaders } from "./webhooks-bare.ts";

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const RECEIVERS = 3;
const DELIVERIES = EVENTS * RECEIVERS;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1);
const CONCURRENCY = DEFAULT_WEBHOOKS_SETTINGS.concurrencyPerReceiver;
const SECRET = "bench-secret-bench-secret-bench-secret-0";
const ANSWER: AttemptResult = { delivered: true, status: 200, latencyMs: 0, responseBody: '{"status":"success"}' };
const round2 = (value: number) => Math.round(value * 100) / 100;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Answers every POST with 200 on the next turn of the event loop, and tells when it has answered `expected`. */
class AnsweringInProcess extends DeliverySender {
  answered = 0;
  expected = Infinity;
  #allAnswered: () => void = () => {};

  allAnswered(expected: number): Promise<void> {
    this.answered = 0;
    this.expected = expected;
    return new Promise((resolve) => (this.#allAnswered = resolve));
  }

  override async post(): Promise<AttemptResult> {
    await nextTurn();
    if (++this.answered === this.expected) this.#allAnswered();
    return ANSWER;
  }
}

/** A kit whose webhooks' sender is `sender` (each kit closes its own at its stop). */
const benchKit = (directory: string, sender = new AnsweringInProcess({ ...DEFAULT_WEBHOOKS_SETTINGS, kitSecret: SECRET })) => {
  const answeredInProcess: ReachkitPlugin = {
    name: "bench-answers-in-process",
    register({ container }) {
      container.bind(WEBHOOK_SENDER, { useValue: sender }, { override: true });
    },
  };
  return createReachkit({
    storage: sqliteStorage({ filename: join(directory, "reachkit.db") }),
    scheduler: nodeScheduleScheduler(),
    logger: silentLogger(),
    secret: SECRET,
    plugins: [accountsPlugin(), webhooksPlugin({ allowPrivateTargets: true }), answeredInProcess],
  });
};

/** CPU microseconds a delivery: the process's, and its main thread's (undefined without /proc), which bounds the kit's rate (bench:webhooks). */
interface Cpu {
  all: number;
  mainThread?: number;
}

/** `work`'s CPU a delivery, the process's and its main thread's. */
async function cpuOf(work: () => Promise<void>): Promise<Cpu> {
  const cpu = process.cpuUsage();
  const mainBefore = mainThreadCpuMicros();
  await work();
  const mainAfter = mainThreadCpuMicros();
  const used = process.cpuUsage(cpu);
  return { all: (used.user + used.system) / DELIVERIES, ...(mainBefore !== undefined && mainAfter !== undefined ? { mainThread: (mainAfter - mainBefore) / DELIVERIES } : {}) };
}

/** The events recorded by a kit with its jobs stopped, then a second kit started on them: its CPU until every delivery is answered. */
async function kitRound(name: string): Promise<Cpu> {
  const directory = mkdtempSync(join(tmpdir(), "bench-webhooks-kit-cost-"));
  try {
    const recorder = benchKit(directory);
    await recorder.start({ runJobs: false });
    try {
      const { output } = await recorder.provisionCompany({ name: "Acme" });
      const { apiKey, companyId } = output as { apiKey: string; companyId: string };
      for (let receiver = 0; receiver < RECEIVERS; receiver++) {
        const url = `http://127.0.0.1:${9000 + receiver}/hooks`;
        const created = await recorder.inject({ method: "POST", url: "/v1/webhooks", headers: { authorization: `Bearer ${apiKey}` }, body: { url, events: ["privacy.request.processed"] } });
        if (created.status !== 201) throw new Error(`create webhook: ${created.status} ${created.body}`);
      }
      for (let n = 0; n < EVENTS; n++) {
        await recorder.storage.transaction(() => recorder.events.emit("privacy.request.processed", { companyId, requestId: `r-${n}`, removedRecords: 3, at: 1772366400000 + n }));
      }
    } finally {
      await recorder.stop();
    }
    const sender = new AnsweringInProcess({ ...DEFAULT_WEBHOOKS_SETTINGS, kitSecret: SECRET });
    const kit = benchKit(directory, sender);
    const answered = sender.allAnswered(DELIVERIES);
    return await profiled(`kit-cost-${name}`, async () => {
      try {
        return await cpuOf(async () => {
          await kit.start();
          await answered;
        });
      } finally {
        await kit.stop();
      }
    });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const body = (n: number) =>
  JSON.stringify({ type: "privacy.request.processed", timestamp: 1772366400000 + n, company: { display_name: "Acme", company_id: "c" }, privacy_request: { id: `r-${n}`, removed_records: 3 } });

/** The bare loop: each body signed, then the turn of the event loop the kit's answer takes, CONCURRENCY at once per receiver. */
async function bareRound(name: string): Promise<Cpu> {
  return profiled(`bare-cost-${name}`, () =>
    cpuOf(async () => {
      await Promise.all(
      Array.from({ length: RECEIVERS }, (_, receiver) =>
        Array.from({ length: CONCURRENCY }, async (_, worker) => {
          for (let n = worker; n < EVENTS; n += CONCURRENCY) {
            const payload = body(n);
            signedHeaders(`${receiver}`.padEnd(25 - String(n).length, "0") + n, payload);
            await nextTurn();
          }
        }),
        ).flat(),
      );
    }),
  );
}

type Figure = "kit" | "bare" | "kitOwn" | "kitMain" | "bareMain" | "kitOwnMain";

async function main(): Promise<void> {
  const rounds: Array<Partial<Record<Figure, number>>> = [];
  for (let round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
    const name = round < 0 ? `warm-up-${round + WARMUP_ROUNDS + 1}` : String(round + 1);
    const bareFirst = round % 2 === 0;
    const bareBefore = bareFirst ? await bareRound(name) : undefined;
    const kit = await kitRound(name);
    const bare = bareBefore ?? (await bareRound(name));
    const figures: Partial<Record<Figure, number>> = { kit: round2(kit.all), bare: round2(bare.all), kitOwn: round2(kit.all - bare.all) };
    if (kit.mainThread !== undefined && bare.mainThread !== undefined) {
      Object.assign(figures, { kitMain: round2(kit.mainThread), bareMain: round2(bare.mainThread), kitOwnMain: round2(kit.mainThread - bare.mainThread) });
    }
    if (round >= 0) rounds.push(figures);
    const mainThread = figures.kitOwnMain === undefined ? "" : `; main thread: kit ${figures.kitMain}, bare ${figures.bareMain}, the kit's own ${figures.kitOwnMain}`;
    console.error(`${round < 0 ? `${name} round (not counted)` : `round ${name}`}: kit ${figures.kit} µs CPU a delivery, bare ${figures.bare}, the kit's own ${figures.kitOwn}${mainThread}`);
  }
  const of = (figure: Figure) => {
    const values = rounds.flatMap((r) => (r[figure] === undefined ? [] : [r[figure]]));
    return values.length === 0 ? undefined : { median: median(values), least: Math.min(...values) };
  };
  report("webhooks-kit-cost", {
    events: EVENTS,
    receivers: RECEIVERS,
    concurrencyPerReceiver: CONCURRENCY,
    cpuMicrosPerDelivery: { reachkit: of("kit"), bare: of("bare") },
    kitOwnCpuMicrosPerDelivery: of("kitOwn"),
    // What bounds the rate in bench:webhooks: the main thread (the checkpointer and V8's helpers run on the other core).
    mainThreadCpuMicrosPerDelivery: { reachkit: of("kitMain"), bare: of("bareMain"), kitOwn: of("kitOwnMain") },
    rounds,
  });
}

await main();
