import { ACCOUNTS, type Accounts } from "../auth/accounts.ts";
import { RateLimiter } from "../auth/rate-limiter.ts";
import type { CliCommand } from "../cli/command.ts";
import { cliCommands } from "../cli/core-commands.ts";
import { EventBus } from "../events/event-bus.ts";
import { handleFetch } from "../http/fetch.ts";
import { HttpCore } from "../http/http-core.ts";
import { inject } from "../http/inject.ts";
import { KEEP_LINKS, LINK_SHORTENER } from "../messaging/link-shortener.ts";
import { HOST_GROUPS, type AnyRoute, type HostGroup } from "../http/route.ts";
import { jobsCollection } from "../jobs/job-record.ts";
import { JOBS, Jobs } from "../jobs/jobs.ts";
import { jsonLogger } from "../logging/json-logger.ts";
import { outboxCollection, outboxReceiptKeys } from "../messaging/outbox-record.ts";
import { apiReferenceRoutes } from "../openapi/api-reference.ts";
import { openApiDocument } from "../openapi/openapi-document.ts";
import { GroupCommit, GROUP_COMMIT } from "./group-commit.ts";
import { Outbox, OUTBOX, OUTBOX_SEND_JOB } from "../messaging/outbox.ts";
import { OUTBOX_DRAIN_JOB, type DrainPayload } from "../messaging/outbox-drains.ts";
import { Metrics, METRICS } from "../metrics/metrics.ts";
import { CLOCK, type Clock } from "../ports/clock.ts";
import { EMAIL_SENDER, type EmailSender } from "../ports/email-sender.ts";
import { LOGGER, type Logger } from "../ports/logger.ts";
import { OBJECT_STORAGE, type ObjectStorage } from "../ports/object-storage.ts";
import { SCHEDULER, type Scheduler } from "../ports/scheduler.ts";
import { SMS_SENDER, type SmsSender } from "../ports/sms-sender.ts";
import { STORAGE, type CollectionSpec, type Storage } from "../ports/storage.ts";
import { resolveConfig, type ReachkitConfig, type ReachkitConfigInput } from "./config.ts";
import { createContainer } from "./container.ts";
import { runCoreMigrations, runMigrations, migrationsCollection } from "./migrations.ts";
import { MissingDependencyError, type DataSubject, type PluginApis, type PluginContext, type ReachkitPlugin } from "./plugin.ts";
import type { KitStatus, ProvisionedCompany, Reachkit, StartOptions } from "./reachkit.ts";
import { systemClock } from "./system-clock.ts";
import { describeToken, defineToken, type Token } from "./token.ts";

export interface ReachkitOptions {
  storage: Storage;
  scheduler: Scheduler;
  /** Default: the system clock. */
  clock?: Clock;
  sms?: SmsSender;
  email?: EmailSender;
  objectStorage?: ObjectStorage;
  /** Default: JSON lines on standard output at level info. */
  logger?: Logger;
  plugins?: readonly ReachkitPlugin[];
  /** Public base URL of every host group, or one per group. Default `http://localhost:3000`. */
  hosts?: string | Partial<Record<HostGroup, string>>;
  /** Signs URLs, webhook tokens, CSRF tokens and id tokens. At least 32 characters. */
  secret: string;
  config?: ReachkitConfigInput;
  /** Serve the OpenAPI document at `/openapi.json` and the API reference page at `/docs` (default true). */
  apiReference?: boolean;
}

export const EVENTS = defineToken<EventBus>("EventBus", ["reachkit core (always bound)"]);
export const CONFIG = defineToken<ReachkitConfig>("ReachkitConfig", ["reachkit core (always bound)"]);

/** The public URL of `path` on a host group: `publicUrl("ui", "/integrations/oauth-install")`. */
export type PublicUrl = (group: HostGroup, path: string) => string;
/** Runs every plugin's `deleteSubjectData` hook; returns how many records they removed. */
export type DeleteSubjectData = (subject: DataSubject) => Promise<number>;
/** The kit secret (`ReachkitOptions.secret`), for HMAC signatures: URLs, tokens, CSRF. */
export const SECRET = defineToken<string>("KitSecret", ["reachkit core (always bound)"]);
export const PUBLIC_URL = defineToken<PublicUrl>("PublicUrl", ["reachkit core (always bound)"]);
/** For a plugin's own jobs (privacy requests), which have no kit at hand. */
export const DELETE_SUBJECT_DATA = defineToken<DeleteSubjectData>("DeleteSubjectData", ["reachkit core (always bound)"]);

/** Builds a kit: one child container, its adapters and plugins, checked at once. */
export function createReachkit(options: ReachkitOptions): Reachkit {
  if (typeof options.secret !== "string" || options.secret.length < 32) {
    throw new Error("createReachkit: `secret` must be a string of at least 32 characters");
  }
  const config = resolveConfig(options.config);
  const clock = options.clock ?? systemClock();
  const logger = options.logger ?? jsonLogger();
  const hosts = resolveHosts(options.hosts);
  const plugins = [...(options.plugins ?? [])];
  checkPluginNames(plugins);

  const container = createContainer();
  container.bind(STORAGE, { useValue: options.storage });
  container.bind(SCHEDULER, { useValue: options.scheduler });
  container.bind(CLOCK, { useValue: clock });
  container.bind(LOGGER, { useValue: logger });
  container.bind(CONFIG, { useValue: config });
  if (options.sms) container.bind(SMS_SENDER, { useValue: options.sms });
  if (options.email) container.bind(EMAIL_SENDER, { useValue: options.email });
  if (options.objectStorage) container.bind(OBJECT_STORAGE, { useValue: options.objectStorage });
  const storage = options.storage;
  container.bind(GROUP_COMMIT, { useValue: new GroupCommit(storage) });
  // Ordinary listeners run after the change's commit; in-transaction listeners (webhook deliveries) join it.
  const events = new EventBus(logger, storage.afterCommit ? (work) => storage.afterCommit!(work) : undefined);
  container.bind(EVENTS, { useValue: events });
  const metrics = new Metrics();
  container.bind(METRICS, { useValue: metrics });
  const jobs = new Jobs(options.storage, clock, options.scheduler, logger.child({ component: "jobs" }), config.jobs);
  metrics.watchJobQueue(() => jobs.queueStats(), clock);
  container.bind(JOBS, { useValue: jobs });
  // A plugin binds the accounts after the core is built: found at their first use, then kept.
  let accounts: Accounts | undefined;
  const accountsOnceBound = () => (accounts ??= container.has(ACCOUNTS) ? container.resolve(ACCOUNTS) : undefined);
  const outbox = new Outbox(
    options.storage,
    clock,
    jobs,
    () => options.sms,
    () => options.email,
    accountsOnceBound,
    logger.child({ component: "outbox" }),
    config.messaging,
    events,
    (status) => metrics.countMessage(status),
  );
  container.bind(OUTBOX, { useValue: outbox });
  container.bind(LINK_SHORTENER, { useValue: KEEP_LINKS });
  // One drain per sender, each waiting on its provider with its slot given back: the lane bounds how many senders start at once.
  jobs.register(OUTBOX_DRAIN_JOB, { handler: (payload: DrainPayload, context) => outbox.drain(payload, context), slots: config.messaging.sendsAtOnce * 2 });
  // Send jobs queued before the drains (a database from an earlier version): each hands its message to its sender's drain.
  jobs.register(OUTBOX_SEND_JOB, { handler: (payload: { messageId: string }, context) => outbox.deliver(payload, context), slots: 1 });
  options.sms?.onReceipt?.((receipt) => outbox.applyReceipt(receipt));

  const publicUrl: PublicUrl = (group, path) => `${hosts[group]}${path}`;
  container.bind(SECRET, { useValue: options.secret });
  container.bind(PUBLIC_URL, { useValue: publicUrl });
  container.bind(DELETE_SUBJECT_DATA, { useValue: deleteSubjectData });
  const contexts = new Map<ReachkitPlugin, PluginContext>();
  for (const plugin of plugins) {
    contexts.set(plugin, {
      container,
      storage: options.storage,
      clock,
      logger: logger.child({ plugin: plugin.name }),
      events,
      jobs,
      outbox,
      config,
      secret: options.secret,
      resolve: (token) => container.resolve(token),
      publicUrl,
      deleteSubjectData,
    });
  }
  const contextOf = (plugin: ReachkitPlugin) => contexts.get(plugin)!;
  async function deleteSubjectData(subject: DataSubject): Promise<number> {
    let removed = 0;
    for (const plugin of plugins) removed += (await plugin.deleteSubjectData?.(contextOf(plugin), subject)) ?? 0;
    return removed;
  }

  for (const plugin of plugins) plugin.register?.(contextOf(plugin));
  const routes: AnyRoute[] = [];
  for (const plugin of plugins) {
    // Declared needs first: building the routes may resolve them.
    checkRequirements(plugin.name, plugin.requires ?? [], container.has);
    const own = plugin.routes?.(contextOf(plugin)) ?? [];
    if (own.some((route) => route.auth.kind !== "none")) checkRequirements(plugin.name, [ACCOUNTS], container.has);
    routes.push(...own);
  }
  // Adapters whose pre-signed upload URLs point at the kit itself (fs, memory) serve them here; an SMS adapter its status callback.
  routes.push(...(options.objectStorage?.routes?.() ?? []), ...(options.sms?.routes?.() ?? []));
  if (options.apiReference ?? true) {
    routes.push(
      ...apiReferenceRoutes({
        document: () => openApiDocument(routes, { publicUrl }),
        apiOrigins: () => [...new Set(HOST_GROUPS.map((group) => new URL(hosts[group]).origin))],
      }),
    );
  }
  for (const plugin of plugins) {
    for (const [type, handler] of Object.entries(plugin.jobs?.(contextOf(plugin)) ?? {})) jobs.register(type, handler);
  }
  const apis = new Map<string, unknown>();
  for (const plugin of plugins) if (plugin.api) apis.set(plugin.name, plugin.api(contextOf(plugin)));

  const http = new HttpCore({
    routes,
    bodyLimitBytes: config.bodyLimitBytes,
    logger: logger.child({ component: "http" }),
    rateLimiter: new RateLimiter(clock, config.rateLimits),
    // Routes that authenticate require ACCOUNTS, checked above.
    authenticate: (token) => accountsOnceBound()!.authenticate(token),
    observe: (method, route, status, seconds) => metrics.observeRequest(method, route, status, seconds),
  });
  const commands: CliCommand[] = cliCommands(plugins);

  let state: KitStatus = "created";
  const collections: CollectionSpec[] = [jobsCollection, migrationsCollection, outboxCollection, ...plugins.flatMap((plugin) => plugin.collections ?? [])];

  const kit: Reachkit = {
    container,
    config,
    storage: options.storage,
    clock,
    logger,
    events,
    jobs,
    outbox,
    http,
    metrics,
    plugins,
    commands,
    get status() {
      return state;
    },
    plugin<N extends keyof PluginApis>(name: N): PluginApis[N] {
      if (!apis.has(name)) throw new Error(`no plugin named "${String(name)}" with an in-process API is installed`);
      return apis.get(name) as PluginApis[N];
    },
    resolve: <T>(token: Token<T>) => container.resolve(token),
    publicUrl,
    async start(startOptions: StartOptions = {}) {
      if (state !== "created") throw new Error(`cannot start a kit that is ${state}`);
      state = "starting";
      await options.storage.ensureCollections(collections);
      await runCoreMigrations(options.storage, clock, [outboxReceiptKeys]);
      await runMigrations(options.storage, clock, plugins, contextOf);
      for (const plugin of plugins) await plugin.start?.(contextOf(plugin));
      if (startOptions.runJobs ?? true) {
        // A kit that runs no jobs sends nothing (a CLI command): it holds no provider connection.
        await options.sms?.start?.();
        await jobs.start({ requeueRunning: startOptions.soleJobRunner ?? false });
      }
      state = "started";
      logger.debug("kit started", { plugins: plugins.map((plugin) => plugin.name), routes: routes.length });
    },
    async stop() {
      if (state === "stopped" || state === "stopping") return;
      const wasStarted = state === "started";
      state = "stopping";
      await http.close();
      if (wasStarted) {
        await jobs.stop();
        for (const plugin of [...plugins].reverse()) await plugin.stop?.(contextOf(plugin));
        await options.sms?.stop?.();
      }
      await options.email?.close?.();
      await options.storage.close();
      state = "stopped";
    },
    inject(request) {
      if (state !== "started") throw new Error("call kit.start() before injecting requests");
      return inject(http, request);
    },
    fetch: (request, info) => handleFetch(http, request, info),
    async provisionCompany(input): Promise<ProvisionedCompany> {
      const company = await container.resolve(ACCOUNTS).createCompany(input);
      const output: Record<string, unknown> = { companyId: company.id, companyName: company.name };
      for (const plugin of plugins) {
        const fields = (await plugin.provisionCompany?.(contextOf(plugin), company)) ?? {};
        for (const [key, value] of Object.entries(fields)) {
          if (key in output) throw new Error(`plugin "${plugin.name}" provisions "${key}", which another plugin already set`);
          output[key] = value;
        }
      }
      return { company, output };
    },
    deleteSubjectData,
  };
  return kit;
}

function resolveHosts(hosts: ReachkitOptions["hosts"]): Record<HostGroup, string> {
  const fallback = typeof hosts === "string" ? hosts : (hosts?.api ?? "http://localhost:3000");
  const resolved = {} as Record<HostGroup, string>;
  for (const group of HOST_GROUPS) {
    const url = (typeof hosts === "object" ? hosts[group] : undefined) ?? fallback;
    resolved[group] = url.replace(/\/+$/, "");
  }
  return resolved;
}

function checkPluginNames(plugins: readonly ReachkitPlugin[]): void {
  const seen = new Set<string>();
  for (const plugin of plugins) {
    if (seen.has(plugin.name)) throw new Error(`plugin "${plugin.name}" is installed twice`);
    seen.add(plugin.name);
  }
}

function checkRequirements(plugin: string, tokens: readonly Token<unknown>[], has: (token: Token<unknown>) => boolean): void {
  for (const token of tokens) {
    if (has(token)) continue;
    const info = describeToken(token);
    throw new MissingDependencyError(plugin, info.name, info.providers);
  }
}
