import { createRequire } from "node:module";
import type * as PromClient from "prom-client";
import type { Counter, CounterConfiguration, Gauge, GaugeConfiguration, Histogram } from "prom-client";
import type { JobQueueStats } from "../jobs/jobs.ts";
import { defineToken } from "../kernel/token.ts";
import type { OutboxStatus } from "../messaging/outbox-record.ts";
import type { Clock } from "../ports/clock.ts";

// prom-client's index also loads its push gateway, its cluster aggregator and the OpenTelemetry API:
// about 40 ms of CPU at every start, a CLI call's included. The kit takes the four modules it uses
// (about 4 ms), and the process metrics only when a host asks for them.
const promModule = createRequire(import.meta.url);
const Registry = promModule("prom-client/lib/registry") as typeof PromClient.Registry;
const CounterClass = promModule("prom-client/lib/counter") as typeof PromClient.Counter;
const GaugeClass = promModule("prom-client/lib/gauge") as typeof PromClient.Gauge;
const HistogramClass = promModule("prom-client/lib/histogram") as typeof PromClient.Histogram;

/** Request durations, in seconds: from a cached answer to a catalog file's upload. */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The kit's metrics, in the Prometheus text format (prom-client). One registry
 * per kit, never prom-client's global one: two kits in one process, or parallel
 * tests, count apart. The core counts requests, messages and the job queue;
 * plugins add theirs with `counter` and `gauge` (resolve `METRICS`). Serving
 * them is the host's choice: the self-hosted server answers `/metrics`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Histogram<"method" | "route" | "status">;
  /** One child per method, route and status: prom-client hashes labels at every `observe` otherwise. */
  readonly #requestSeries = new Map<string, Histogram.Internal<"method" | "route" | "status">>();
  readonly #messages: Counter<"status">;

  constructor() {
    this.#requests = new HistogramClass({
      name: "reachkit_http_request_duration_seconds",
      help: "Requests answered by reachkit's routes, by method, route pattern and status, with their duration",
      labelNames: ["method", "route", "status"],
      buckets: REQUEST_BUCKETS,
      registers: [this.registry],
    });
    this.#messages = this.counter({ name: "reachkit_messages_total", help: "Outbound texts and emails that reached each status (queued, sent, delivered, undelivered, failed, suppressed)", labelNames: ["status"] });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric, in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** `route` is the route's pattern (`/v1/subscriptions/:id`), never the raw path: the series stay few. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = KNOWN_METHODS.has(method) ? method : "other";
    const key = `${methodLabel} ${route} ${status}`;
    let series = this.#requestSeries.get(key);
    if (!series) {
      series = this.#requests.labels(methodLabel, route, String(status));
      this.#requestSeries.set(key, series);
    }
    series.observe(seconds);
  }

  countMessage(status: OutboxStatus): void {
    this.#messages.inc({ status });
  }

  counter<L extends string>(configuration: Omit<CounterConfiguration<L>, "registers">): Counter<L> {
    return new CounterClass({ ...configuration, registers: [this.registry] });
  }

  gauge<L extends string>(configuration: Omit<GaugeConfiguration<L>, "registers">): Gauge<L> {
    return new GaugeClass({ ...configuration, registers: [this.registry] });
  }

  /** The job queue, read from storage at each scrape (so every process sees the shared queue). */
  watchJobQueue(stats: () => Promise<JobQueueStats>, clock: Clock): void {
    // A storage that is closing (the kit stopping) leaves the gauges as they were.
    const read = () => stats().catch(() => undefined);
    this.gauge({
      name: "reachkit_jobs",
      help: "Durable jobs by state: queued (due or later), due (queued and due now), running, dead",
      labelNames: ["state"],
      async collect() {
        const current = await read();
        if (!current) return;
        for (const state of ["queued", "due", "running", "dead"] as const) this.set({ state }, current[state]);
      },
    });
    this.gauge({
      name: "reachkit_jobs_oldest_due_age_seconds",
      help: "How long the oldest due job has waited to run (0 when none is due)",
      async collect() {
        const current = await read();
        if (current) this.set(current.oldestDueAt === undefined ? 0 : Math.max(0, (clock.now() - current.oldestDueAt) / 1000));
      },
    });
  }

  /** Process metrics (CPU, memory, event loop lag, garbage collection): for a host that owns its process, as the self-hosted server does. */
  collectProcessMetrics(): void {
    const collectDefaultMetrics = promModule("prom-client/lib/defaultMetrics") as typeof PromClient.collectDefaultMetrics;
    collectDefaultMetrics({ register: this.registry });
  }
}

export const METRICS = defineToken<Metrics>("Metrics", ["reachkit core (always bound)"]);
