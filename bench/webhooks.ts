// bench:webhooks: 10,000 events fanned out to 3 local receivers (a process of their own).
// 1. Throughput, measured as bench:delivery measures its queued texts: a kit with its jobs stopped
//    records the events first, each in its own transaction (the emission phase: events per second and CPU
//    per event); then a kit starts on that database and the timed window runs from its start until the
//    receivers have every delivery (the delivery phase). Its deliveries per second, beside a bare loop that
//    POSTs the same requests with the same HTTP client (undici, the same agent settings and per-receiver
//    concurrency; the same bodies and headers, each signed as it leaves, as any sender must: the Standard
//    Webhooks timestamp is the time of sending), in alternated rounds, give the ratio; the end-to-end figure
//    (both phases' time) is printed too. A warm-up round, not counted, runs both sides first (BENCH_WARMUP_ROUNDS).
//    The commits per delivery and per event come from a round of their own after the timed ones
//    (bench/sqlite-commits.ts wraps every statement while it counts, a cost the timed rounds would charge the kit
//    alone). On Linux each side's CPU is split between its main thread and its other threads (the kit's SQLite
//    checkpointer and V8's helpers), with the receivers' process beside (bench/thread-cpu.ts).
// 2. One receiver answering after 10 s, events emitted live while the kit delivers: the rate of each of the two
//    others, beside its rate when all three are fast, and the kit's CPU and commits per event in both.
// BENCH_PARTS=throughput or slow runs one part. BENCH_CPU_PROFILE=<dir> writes a CPU profile of each round's
// emission and delivery phases, and of its bare loop, there; the sampling slows them, so those rounds' figures are not the bench's.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { nodeScheduleScheduler } from "../adapters/scheduler/node-schedule/index.ts";
import { sqliteStorage } from "../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../plugins/accounts/index.ts";
import { DEFAULT_WEBHOOKS_SETTINGS, webhooksPlugin } from "../plugins/webhooks/index.ts";
import { createReachkit, silentLogger } from "../src/index.ts";
import { profiled } from "./cpu-profile.ts";
import { bareDeliveries } from "./webhooks-bare.ts";
import { withSqliteCommitsCounted } from "./sqlite-commits.ts";
import { threadsCpu, type ThreadsCpu } from "./thread-cpu.ts";
import { report, startServerProcess, stopServerProcess, type ServerProcess } from "./support.ts";

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
/**
 * Five: on a machine where a side's round lasts one or two seconds, the rounds' ratios spread widely (0.36 to 0.60 in
 * fifteen rounds of one tree, 2026-11-27), and the median of three moved by a tenth from one run to the next.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * Throughput rounds run first and not counted: the first round's first side ran its HTTP path cold (before, the bare
 * loop in round 1: about 95 µs a delivery on its main thread against 75-85 warm, which lifted round 1's ratio to
 * ~0.75 while the warm rounds gave ~0.65).
 */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1);
const CONCURRENCY = DEFAULT_WEBHOOKS_SETTINGS.concurrencyPerReceiver;
/** Which parts run: `throughput` (beside the bare loop) and `slow` (one receiver answering after 10 s). */
const PARTS = new Set((process.env.BENCH_PARTS ?? "throughput,slow").split(","));
const SECRET = "bench-secret-bench-secret-bench-secret-0";
const round1 = (value: number) => Math.round(value * 10) / 10;
const load = () => loadavg().map(round1);

interface Receivers {
  process: ServerProcess;
  urls: string[];
  counts(): Promise<number[]>;
  /** Answers once receiver `index` has taken `atLeast` POSTs in all. */
  reached(index: number, atLeast: number): Promise<void>;
  stop(): Promise<void>;
}

async function startReceivers(env: Record<string, string> = {}): Promise<Receivers> {
  let ports: number[] = [];
  const started = await startServerProcess("bench/servers/webhook-receivers.ts", env, (line) => {
    const found = /^PORTS (.+)$/.exec(line);
    if (found) ports = found[1]!.split(" ").map(Number);
  });
  const agent = new Agent();
  return {
    process: started,
    urls: ports.map((port) => `http://127.0.0.1:${port}/hooks`),
    async counts() {
      // A connection of its own each time: a kept-alive one may be closed by the server as it is reused.
      const answer = await request(`http://127.0.0.1:${ports[0]}/counts`, { dispatcher: agent, reset: true });
      return (await answer.body.json()) as number[];
    },
    async reached(index, atLeast) {
      const answer = await request(`http://127.0.0.1:${ports[0]}/counts?receiver=${index}&atLeast=${atLeast}`, { dispatcher: agent, reset: true });
      await answer.body.dump();
    },
    async stop() {
      await agent.close();
      await stopServerProcess(started.child);
    },
  };
}

/**
 * Waits until each of the `measured` receivers has taken `events` more POSTs than `before`; answers the time each took
 * from `started`. One waiting request per receiver, answered by the receivers' process: a poll every 20 ms (a
 * connection each) cost the measured process about 3-5 µs a delivery, which the bare loop, counting its own answers, did not pay.
 */
async function until(receivers: Receivers, measured: readonly number[], before: readonly number[], events: number, started: number): Promise<number[]> {
  return Promise.all(
    measured.map(async (index) => {
      await receivers.reached(index, before[index]! + events);
      return performance.now() - started;
    }),
  );
}

const body = (n: number) =>
  JSON.stringify({ type: "privacy.request.processed", timestamp: 1772366400000 + n, company: { display_name: "Acme", company_id: "c" }, privacy_request: { id: `r-${n}`, removed_records: 3 } });

interface Side {
  seconds: number;
  deliveriesPerSecond: number;
  cpuMicrosPerDelivery: number;
  /**
   * SQLite commits that wrote on the storage's own connection, per delivery (the kit's side: in the delivery phase its drains'
   * commits, their outcomes' among them; live, the events' own too).
   */
  commitsPerDelivery?: number;
  /** Each measured receiver's deliveries per second (the kit's side). */
  perReceiver?: number[];
  /** CPU microseconds per delivery of the measured process's main thread and its other threads (Linux), and of the receivers' process. */
  threadsCpuMicros?: ThreadsCpu & { receivers: number };
}

interface CpuSoFar {
  /** This process's threads (undefined without /proc). */
  own?: ThreadsCpu;
  /** The receivers' process (its CPU probe). */
  receivers: number;
}

const cpuSoFar = async (receivers: Receivers): Promise<CpuSoFar> => ({ own: threadsCpu(), receivers: await receivers.process.cpuMicros() });

/** Per delivery since `before`: this process's main thread and its other threads, and the receivers' process; undefined without /proc. */
async function threadsUsedPerDelivery(receivers: Receivers, before: CpuSoFar, delivered: number): Promise<Side["threadsCpuMicros"]> {
  const now = await cpuSoFar(receivers);
  if (before.own === undefined || now.own === undefined) return undefined;
  const perDelivery = (micros: number) => round1(micros / delivered);
  return {
    mainThread: perDelivery(now.own.mainThread - before.own.mainThread),
    otherThreads: perDelivery(now.own.otherThreads - before.own.otherThreads),
    receivers: perDelivery(now.receivers - before.receivers),
  };
}

/** The bare loop's round: its answers counted by the receivers. */
async function bare(receivers: Receivers, round: number | string): Promise<Side> {
  const before = await receivers.counts();
  const cpuBefore = await cpuSoFar(receivers);
  const { seconds, cpuMicros } = await profiled(`bare-${round}`, () => bareDeliveries(receivers.urls, EVENTS, CONCURRENCY, body));
  const delivered = (await receivers.counts()).reduce((sum, count, index) => sum + count - before[index]!, 0);
  const threadsCpuMicros = await threadsUsedPerDelivery(receivers, cpuBefore, delivered);
  return { seconds: round1(seconds), deliveriesPerSecond: Math.round(delivered / seconds), cpuMicrosPerDelivery: round1(cpuMicros / delivered), threadsCpuMicros };
}

function benchKit(directory: string) {
  return createReachkit({
    storage: sqliteStorage({ filename: join(directory, "reachkit.db") }),
    scheduler: nodeScheduleScheduler(),
    logger: silentLogger(),
    secret: SECRET,
    plugins: [accountsPlugin(), webhooksPlugin({ allowPrivateTargets: true })],
  });
}

type Kit = ReturnType<typeof benchKit>;

/** A company with a webhook at each receiver: its id. */
async function subscribe(kit: Kit, receivers: Receivers): Promise<string> {
  const { output } = await kit.provisionCompany({ name: "Acme" });
  const apiKey = (output as { apiKey: string }).apiKey;
  for (const url of receivers.urls) {
    const created = await kit.inject({ method: "POST", url: "/v1/webhooks", headers: { authorization: `Bearer ${apiKey}` }, body: { url, events: ["privacy.request.processed"] } });
    if (created.status !== 201) throw new Error(`create webhook: ${created.status} ${created.body}`);
  }
  return (output as { companyId: string }).companyId;
}

/** Emits EVENTS events, each in its own transaction: what the kit spent, in microseconds of CPU and wall time. */
async function emit(kit: Kit, companyId: string): Promise<{ cpuMicros: number; ms: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let n = 0; n < EVENTS; n++) {
    await kit.storage.transaction(() => kit.events.emit("privacy.request.processed", { companyId, requestId: `r-${n}`, removedRecords: 3, at: 1772366400000 + n }));
  }
  const used = process.cpuUsage(cpu);
  return { cpuMicros: used.user + used.system, ms: performance.now() - started };
}

/** The emission phase of a throughput round. */
interface Emission {
  seconds: number;
  eventsPerSecond: number;
  cpuMicrosPerEvent: number;
  /** Only in the counting round. */
  commitsPerEvent?: number;
}

/** `work`'s result and, when `count`, the SQLite commits that wrote during it. */
async function counted<R>(count: boolean, work: () => Promise<R>): Promise<{ result: R; commits?: number }> {
  return count ? withSqliteCommitsCounted(work) : { result: await work() };
}

// Three decimals: the delivery phase commits once per few hundred deliveries.
const perItem = (commits: number | undefined, items: number) => (commits === undefined ? undefined : Math.round((commits / items) * 1000) / 1000);

/**
 * A throughput round's kit side: EVENTS events recorded by a kit with its jobs stopped (the emission phase),
 * then a kit started on them, timed from its start until the receivers have every delivery (the delivery phase).
 * `countCommits`: the SQLite commits of both phases counted too (then its times are not the bench's).
 */
async function recordedThenDelivered(receivers: Receivers, round: number | string, countCommits = false): Promise<{ emission: Emission; delivery: Side; endToEnd: Side }> {
  const directory = mkdtempSync(join(tmpdir(), "bench-webhooks-"));
  try {
    const recorder = benchKit(directory);
    await recorder.start({ runJobs: false });
    let emitted: { result: { cpuMicros: number; ms: number }; commits?: number };
    try {
      const companyId = await subscribe(recorder, receivers);
      emitted = await profiled(`reachkit-emission-${round}`, () => counted(countCommits, () => emit(recorder, companyId)));
    } finally {
      await recorder.stop();
    }
    const { cpuMicros: emissionCpuMicros, ms: emissionMs } = emitted.result;
    const emission: Emission = {
      seconds: round1(emissionMs / 1000),
      eventsPerSecond: Math.round(EVENTS / (emissionMs / 1000)),
      cpuMicrosPerEvent: round1(emissionCpuMicros / EVENTS),
      commitsPerEvent: perItem(emitted.commits, EVENTS),
    };
    const kit = benchKit(directory);
    const before = await receivers.counts();
    const delivery = await profiled(`reachkit-delivery-${round}`, () =>
      counted(countCommits, async () => {
        const cpuBefore = await cpuSoFar(receivers);
        const cpu = process.cpuUsage();
        const started = performance.now();
        try {
          await kit.start();
          const took = await until(receivers, [0, 1, 2], before, EVENTS, started);
          const used = process.cpuUsage(cpu);
          return { took, used, threadsCpuMicros: await threadsUsedPerDelivery(receivers, cpuBefore, 3 * EVENTS) };
        } finally {
          await kit.stop();
        }
      }),
    ).then(({ result, commits }) => ({ ...sideOf(Math.max(...result.took), result.used, commits, result.took), threadsCpuMicros: result.threadsCpuMicros }));
    const delivered = 3 * EVENTS;
    const endToEndSeconds = emissionMs / 1000 + delivery.seconds;
    const endToEnd: Side = {
      seconds: round1(endToEndSeconds),
      deliveriesPerSecond: Math.round(delivered / endToEndSeconds),
      cpuMicrosPerDelivery: round1(delivery.cpuMicrosPerDelivery + emissionCpuMicros / delivered),
    };
    return { emission, delivery, endToEnd };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** A side's figures from its elapsed milliseconds, CPU and commits, and each measured receiver's milliseconds. */
function sideOf(elapsedMs: number, used: NodeJS.CpuUsage, commits: number | undefined, took: readonly number[]): Side {
  const delivered = took.length * EVENTS;
  return {
    seconds: round1(elapsedMs / 1000),
    deliveriesPerSecond: Math.round(delivered / (elapsedMs / 1000)),
    cpuMicrosPerDelivery: round1((used.user + used.system) / delivered),
    commitsPerDelivery: perItem(commits, delivered),
    perReceiver: took.map((ms) => Math.round(EVENTS / (ms / 1000))),
  };
}

/**
 * A kit on SQLite with three webhooks; emits EVENTS events, each in its own transaction, while it delivers, and times until the
 * `measured` receivers have theirs. Its commits are counted: both sides of the slow part's comparison pay the counter.
 */
async function live(receivers: Receivers, measured: readonly number[]): Promise<Side> {
  const directory = mkdtempSync(join(tmpdir(), "bench-webhooks-"));
  const kit = benchKit(directory);
  await kit.start();
  try {
    const companyId = await subscribe(kit, receivers);
    const before = await receivers.counts();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const { result: took, commits } = await withSqliteCommitsCounted(async () => {
      await emit(kit, companyId);
      return until(receivers, measured, before, EVENTS, started);
    });
    return sideOf(Math.max(...took), process.cpuUsage(cpu), commits, took);
  } finally {
    await kit.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

const threadsText = (side: Side) =>
  side.threadsCpuMicros === undefined ? "" : `: main thread ${side.threadsCpuMicros.mainThread}, other threads ${side.threadsCpuMicros.otherThreads}; receivers ${side.threadsCpuMicros.receivers}`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const threadsMedian = (all: ReadonlyArray<NonNullable<Side["threadsCpuMicros"]>>) => ({
  mainThread: median(all.map((t) => t.mainThread)),
  otherThreads: median(all.map((t) => t.otherThreads)),
  receivers: median(all.map((t) => t.receivers)),
});
const ratioOf = (kit: Side, bareSide: Side) => Math.round((kit.deliveriesPerSecond / bareSide.deliveriesPerSecond) * 100) / 100;
/**
 * The kit's CPU a delivery over the bare loop's in the same round: on a machine whose speed drifts (a quarter between
 * rounds here, which moves each side's rate), both sides of a round drift together, so this moves least from round to
 * round; for telling two trees apart, not the issue's figure (the ratio of rates).
 */
const cpuOverBare = (kit: Side, bareSide: Side) => Math.round((kit.cpuMicrosPerDelivery / bareSide.cpuMicrosPerDelivery) * 100) / 100;

async function main(): Promise<void> {
  const loadAtStart = load();
  const fast = await startReceivers();
  const rounds: Array<{ bare: Side; delivery: Side; emission: Emission; endToEnd: Side; load: number[]; at: string }> = [];
  let commitsRound: { commitsPerDelivery: number; commitsPerEvent: number; load: number[]; at: string } | undefined;
  try {
    for (let round = -WARMUP_ROUNDS; PARTS.has("throughput") && round < ROUNDS; round++) {
      const name = round < 0 ? `warm-up-${round + WARMUP_ROUNDS + 1}` : round + 1;
      const bareFirst = round % 2 === 0;
      const bareBefore = bareFirst ? await bare(fast, name) : undefined;
      const kit = await recordedThenDelivered(fast, name);
      const bareSide = bareBefore ?? (await bare(fast, name));
      if (round >= 0) rounds.push({ bare: bareSide, ...kit, load: load(), at: new Date().toISOString() });
      console.error(
        `${round < 0 ? `${name} round (not counted)` : `round ${name}`}: delivery phase ${kit.delivery.deliveriesPerSecond}/s (${kit.delivery.cpuMicrosPerDelivery} µs CPU per delivery${threadsText(kit.delivery)}), ` +
          `bare ${bareSide.deliveriesPerSecond}/s (${bareSide.cpuMicrosPerDelivery} µs${threadsText(bareSide)}), ratio ${ratioOf(kit.delivery, bareSide)}, CPU over bare ${cpuOverBare(kit.delivery, bareSide)}; ` +
          `emission ${kit.emission.eventsPerSecond} events/s (${kit.emission.cpuMicrosPerEvent} µs CPU per event); ` +
          `end to end ${kit.endToEnd.deliveriesPerSecond}/s; load ${load().join(" ")}, ${new Date().toISOString()}`,
      );
    }
    if (PARTS.has("throughput")) {
      const counting = await recordedThenDelivered(fast, "counting", true);
      commitsRound = { commitsPerDelivery: counting.delivery.commitsPerDelivery!, commitsPerEvent: counting.emission.commitsPerEvent!, load: load(), at: new Date().toISOString() };
      console.error(`commits round (not timed): ${commitsRound.commitsPerDelivery} commits per delivery, ${commitsRound.commitsPerEvent} per event emitted; load ${load().join(" ")}, ${commitsRound.at}`);
    }
  } finally {
    await fast.stop();
  }
  // One receiver answering after 10 s: each of the two others' rate, beside its rate when all three are fast, in alternated order.
  // Also the kit's CPU and commits per event until the two have all theirs: what the third costs, steadier than rates on a shared machine.
  const healthyRounds: Array<{
    allFast: number[];
    oneSlow: number[];
    cpuMicrosPerEvent: { allFast: number; oneSlow: number };
    commitsPerEvent: { allFast: number; oneSlow: number };
    load: number[];
  }> = [];
  for (let round = 0; PARTS.has("slow") && round < ROUNDS; round++) {
    const healthyRun = async (env: Record<string, string>) => {
      const receivers = await startReceivers(env);
      try {
        const side = await live(receivers, [0, 1]);
        return { rates: side.perReceiver!, cpuMicrosPerEvent: Math.round(side.cpuMicrosPerDelivery * 2), commitsPerEvent: Math.round(side.commitsPerDelivery! * 2 * 100) / 100 };
      } finally {
        await receivers.stop();
      }
    };
    const slowFirst = round % 2 === 1;
    const oneSlowFirst = slowFirst ? await healthyRun({ SLOW_RECEIVER: "2", SLOW_MS: "10000" }) : undefined;
    const allFast = await healthyRun({});
    const oneSlow = oneSlowFirst ?? (await healthyRun({ SLOW_RECEIVER: "2", SLOW_MS: "10000" }));
    healthyRounds.push({
      allFast: allFast.rates,
      oneSlow: oneSlow.rates,
      cpuMicrosPerEvent: { allFast: allFast.cpuMicrosPerEvent, oneSlow: oneSlow.cpuMicrosPerEvent },
      commitsPerEvent: { allFast: allFast.commitsPerEvent, oneSlow: oneSlow.commitsPerEvent },
      load: load(),
    });
    console.error(
      `slow round ${round + 1}: healthy receivers ${allFast.rates.join(", ")}/s with all fast, ${oneSlow.rates.join(", ")}/s with one slow; ` +
        `CPU per event ${allFast.cpuMicrosPerEvent} / ${oneSlow.cpuMicrosPerEvent} µs, commits per event ${allFast.commitsPerEvent} / ${oneSlow.commitsPerEvent}; load ${load().join(" ")}`,
    );
  }
  const throughput = rounds.length > 0;
  const medianOf = (figure: (round: (typeof rounds)[number]) => number) => median(rounds.map(figure));
  const healthy = [0, 1].map((receiver) => {
    const allFast = median(healthyRounds.map((r) => r.allFast[receiver]!));
    const oneSlow = median(healthyRounds.map((r) => r.oneSlow[receiver]!));
    const keptPerRound = healthyRounds.map((r) => Math.round((r.oneSlow[receiver]! / r.allFast[receiver]!) * 100) / 100);
    return { receiver, perSecondAllFast: allFast, perSecondOneSlow: oneSlow, kept: Math.round((oneSlow / allFast) * 100) / 100, keptPerRound, keptMedianOfRounds: median(keptPerRound) };
  });
  const perEvent = (figure: "cpuMicrosPerEvent" | "commitsPerEvent") => ({
    allFast: median(healthyRounds.map((r) => r[figure].allFast)),
    oneSlow: median(healthyRounds.map((r) => r[figure].oneSlow)),
  });
  report("webhooks", {
    events: EVENTS,
    receivers: 3,
    concurrencyPerReceiver: CONCURRENCY,
    deliveryPhase: throughput
      ? {
          deliveriesPerSecond: { reachkit: medianOf((r) => r.delivery.deliveriesPerSecond), bare: medianOf((r) => r.bare.deliveriesPerSecond) },
          ratioPerRound: rounds.map((r) => ratioOf(r.delivery, r.bare)),
          ratio: medianOf((r) => ratioOf(r.delivery, r.bare)),
          target: 0.7,
          cpuMicrosPerDelivery: { reachkit: medianOf((r) => r.delivery.cpuMicrosPerDelivery), bare: medianOf((r) => r.bare.cpuMicrosPerDelivery) },
          cpuOverBarePerRound: rounds.map((r) => cpuOverBare(r.delivery, r.bare)),
          cpuOverBare: medianOf((r) => cpuOverBare(r.delivery, r.bare)),
          threadsCpuMicrosPerDelivery: rounds.every((r) => r.delivery.threadsCpuMicros && r.bare.threadsCpuMicros)
            ? { reachkit: threadsMedian(rounds.map((r) => r.delivery.threadsCpuMicros!)), bare: threadsMedian(rounds.map((r) => r.bare.threadsCpuMicros!)) }
            : undefined,
          commitsPerDelivery: commitsRound?.commitsPerDelivery,
        }
      : undefined,
    emissionPhase: throughput
      ? { eventsPerSecond: medianOf((r) => r.emission.eventsPerSecond), cpuMicrosPerEvent: medianOf((r) => r.emission.cpuMicrosPerEvent), commitsPerEvent: commitsRound?.commitsPerEvent }
      : undefined,
    endToEnd: throughput ? { deliveriesPerSecond: medianOf((r) => r.endToEnd.deliveriesPerSecond), cpuMicrosPerDelivery: medianOf((r) => r.endToEnd.cpuMicrosPerDelivery) } : undefined,
    oneReceiverSlow: healthyRounds.length > 0 ? healthy : undefined,
    perEventOneSlow: healthyRounds.length > 0 ? { cpuMicros: perEvent("cpuMicrosPerEvent"), commits: perEvent("commitsPerEvent") } : undefined,
    rounds,
    commitsRound,
    healthyRounds,
    loadAverage: { atStart: loadAtStart, atEnd: load() },
  });
}

await main();
