import type { Company } from "../auth/accounts.ts";
import type { CliCommand } from "../cli/command.ts";
import type { EventBus } from "../events/event-bus.ts";
import type { FetchRequestInfo } from "../http/fetch.ts";
import type { HttpCore } from "../http/http-core.ts";
import type { InjectRequest, InjectResponse } from "../http/inject.ts";
import type { HostGroup } from "../http/route.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Outbox } from "../messaging/outbox.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { Storage } from "../ports/storage.ts";
import type { ReachkitConfig } from "./config.ts";
import type { ContainerFacade } from "./container.ts";
import type { DataSubject, PluginApis, ReachkitPlugin } from "./plugin.ts";
import type { Token } from "./token.ts";

export interface StartOptions {
  /** Run due jobs in this process (default true; the CLI opens kits without). */
  runJobs?: boolean;
  /**
   * This process is the only one running jobs on its storage (the self-hosted
   * server holds its data directory alone): a job found running at start was
   * left by a process that died, and is queued again at once instead of when its
   * lease runs out. Never set it when several processes share the storage.
   */
  soleJobRunner?: boolean;
}

/** What `reachkit init` and `Reachkit.provisionCompany` return: the new company and its credentials. */
export interface ProvisionedCompany {
  company: Company;
  /** `companyId`, `companyName`, then every plugin's fields (apiKey, legacyToken, signUpSources...). */
  output: Record<string, unknown>;
}

/** Where a kit is in its life: it serves requests and runs jobs only while `started`. */
export type KitStatus = "created" | "starting" | "started" | "stopping" | "stopped";

/** One running instance of reachkit: its container, routes, jobs and lifecycle. */
export interface Reachkit {
  readonly container: ContainerFacade;
  readonly config: ReachkitConfig;
  readonly storage: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events: EventBus;
  readonly jobs: Jobs;
  /** Every outbound SMS goes through it. */
  readonly outbox: Outbox;
  readonly http: HttpCore;
  /** Requests, messages, the job queue and the plugins' own counts, in the Prometheus text format (`await kit.metrics.text()`). */
  readonly metrics: Metrics;
  readonly status: KitStatus;
  readonly plugins: readonly ReachkitPlugin[];
  /** Every CLI command of the core and the plugins. */
  readonly commands: readonly CliCommand[];
  /** The in-process service of a plugin. */
  plugin<N extends keyof PluginApis>(name: N): PluginApis[N];
  resolve<T>(token: Token<T>): T;
  publicUrl(group: HostGroup, path: string): string;
  /** Prepares storage (collections, migrations), starts plugins and, by default, the job runner. */
  start(options?: StartOptions): Promise<void>;
  /** Graceful: stops taking requests, lets running jobs finish, stops plugins, closes storage. */
  stop(): Promise<void>;
  /** Runs a request in process, with no socket. */
  inject(request: InjectRequest): Promise<InjectResponse>;
  /**
   * Serves a fetch-API `Request` (Bun, Deno, Cloudflare Workers, Hono...): every
   * route at the root, anything else the JSON 404. No global is touched. For a
   * prefix, host groups or fall-through use `fetchHandler` from `adapters/http/fetch`.
   */
  fetch(request: Request, info?: FetchRequestInfo): Promise<Response>;
  /** Creates a company and lets every plugin set it up (credentials, sign-up units...). */
  provisionCompany(input: { name: string; domain?: string; contactEmail?: string }): Promise<ProvisionedCompany>;
  /** Deletes a subject's data in every plugin; returns the number of records removed. */
  deleteSubjectData(subject: DataSubject): Promise<number>;
}
