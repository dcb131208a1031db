import type { Company } from "../auth/accounts.ts";
import type { CliCommand } from "../cli/command.ts";
import type { EventBus } from "../events/event-bus.ts";
import type { AnyRoute, HostGroup } from "../http/route.ts";
import type { JobDefinition, JobHandler } from "../jobs/job-definition.ts";
import type { Jobs } from "../jobs/jobs.ts";
import type { Outbox } from "../messaging/outbox.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { CollectionSpec, Storage } from "../ports/storage.ts";
import type { ReachkitConfig } from "./config.ts";
import type { ContainerFacade } from "./container.ts";
import type { Token } from "./token.ts";

/** What a plugin sees of its kit. */
export interface PluginContext {
  readonly container: ContainerFacade;
  readonly storage: Storage;
  readonly clock: Clock;
  /** Carries `plugin: <name>` on every entry. */
  readonly logger: Logger;
  readonly events: EventBus;
  readonly jobs: Jobs;
  /** Every outbound SMS goes through it. */
  readonly outbox: Outbox;
  readonly config: ReachkitConfig;
  /** The kit secret, for HMAC signatures (URLs, tokens, CSRF). */
  readonly secret: string;
  resolve<T>(token: Token<T>): T;
  /** The public URL of `path` on a host group (`publicUrl("ui", "/integrations/oauth-install")`). */
  publicUrl(group: HostGroup, path: string): string;
  /**
   * Runs every plugin's `deleteSubjectData` hook, as `Reachkit.deleteSubjectData`
   * does: for a plugin's own jobs (privacy requests), which have no kit at hand.
   */
  deleteSubjectData(subject: DataSubject): Promise<number>;
}

/** A data migration, run once per database and recorded in the ledger. Ids must never change. */
export interface Migration {
  id: string;
  up(context: PluginContext): Promise<void>;
}

/** The identity of a subject whose data a privacy request deletes. */
export interface DataSubject {
  companyId: string;
  phone?: string;
  email?: string;
}

/**
 * A plugin: one domain's routes, services, storage schema, jobs, CLI commands
 * and hooks in one value, made by a factory such as `subscriptionsPlugin()`.
 * Plugin order never matters: every `register` runs before anything is built.
 */
export interface ReachkitPlugin<Name extends string = string, Api = unknown> {
  readonly name: Name;
  /** Tokens this plugin resolves; checked at boot. */
  readonly requires?: readonly Token<unknown>[];
  readonly collections?: readonly CollectionSpec[];
  readonly migrations?: readonly Migration[];
  readonly commands?: readonly CliCommand[];
  /** Binds the plugin's services on its tokens. */
  register?(context: PluginContext): void;
  routes?(context: PluginContext): readonly AnyRoute[];
  /** The plugin's job types: a handler each, or a handler and its batch size. */
  jobs?(context: PluginContext): Readonly<Record<string, JobHandler<never> | JobDefinition<never>>>;
  /** The typed in-process service that host apps reach with `kit.plugin(name)`. */
  api?(context: PluginContext): Api;
  /** Sets up a new company (`reachkit init`); returns fields for the init output. */
  provisionCompany?(context: PluginContext, company: Company): Promise<Record<string, unknown>>;
  /** Deletes every record this plugin holds about a subject (privacy requests). Returns how many. */
  deleteSubjectData?(context: PluginContext, subject: DataSubject): Promise<number>;
  start?(context: PluginContext): Promise<void>;
  stop?(context: PluginContext): Promise<void>;
}

/**
 * In-process services by plugin name. Each plugin adds its own by declaration
 * merging, which types `kit.plugin("subscriptions")`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface PluginApis {}

/** Types a plugin value (an identity function that checks its shape). */
export function definePlugin<Name extends string, Api>(plugin: ReachkitPlugin<Name, Api>): ReachkitPlugin<Name, Api> {
  return plugin;
}

/** A plugin needs a token that no adapter or plugin bound. */
export class MissingDependencyError extends Error {
  constructor(
    readonly plugin: string,
    readonly token: string,
    readonly providers: readonly string[],
  ) {
    super(
      `plugin "${plugin}" requires ${token}, which nothing provides` +
        (providers.length > 0 ? `; provide one of: ${providers.join(", ")}` : ""),
    );
    this.name = "MissingDependencyError";
  }
}
