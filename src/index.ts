/**
 * reachkit: an embeddable, self-hostable merchant messaging platform.
 *
 * Build a kit with {@link createReachkit}, give it adapters (storage, scheduler,
 * SMS, object storage) and plugins, then serve it through an HTTP adapter.
 *
 * @packageDocumentation
 */
import "reflect-metadata";

export {
  createReachkit,
  CONFIG,
  EVENTS,
  SECRET,
  PUBLIC_URL,
  DELETE_SUBJECT_DATA,
  type ReachkitOptions,
  type PublicUrl,
  type DeleteSubjectData,
} from "./kernel/create-reachkit.ts";
export type { Reachkit, KitStatus, StartOptions, ProvisionedCompany } from "./kernel/reachkit.ts";
export { Metrics, METRICS } from "./metrics/metrics.ts";
export {
  definePlugin,
  MissingDependencyError,
  type ReachkitPlugin,
  type PluginContext,
  type PluginApis,
  type Migration,
  type DataSubject,
} from "./kernel/plugin.ts";
export { defineToken, type Token } from "./kernel/token.ts";
export { inject, injectable } from "./kernel/di.ts";
export { DuplicateBindingError, type ContainerFacade, type Binding, type BindOptions, type InjectableClass } from "./kernel/container.ts";
export { resolveConfig, DEFAULT_BODY_LIMIT_BYTES, type ReachkitConfig, type ReachkitConfigInput } from "./kernel/config.ts";
export { systemClock } from "./kernel/system-clock.ts";
export { sortableId, isSortableId } from "./kernel/ids.ts";
export { BatchWrite, BulkWrite, GroupCommit, GROUP_COMMIT, type GroupCommitOptions, type GroupWrite } from "./kernel/group-commit.ts";
export { GatheredWrites } from "./kernel/gathered-writes.ts";
export { inJoinedTransaction } from "./kernel/joined-transaction.ts";
export { ConcurrentChangeError, retryConcurrentChanges } from "./kernel/concurrent-changes.ts";

export * from "./ports/index.ts";

export {
  defineRoute,
  jsonBody,
  jsonBodyCheckedBy,
  formBody,
  rawBody,
  reply,
  HOST_GROUPS,
  type AnyRoute,
  type RouteDefinition,
  type RouteAuth,
  type RouteReply,
  type RequestContext,
  type BodySpec,
  type BodyOf,
  type QueryOf,
  type HostGroup,
  type HttpMethod,
  type Headers,
  type ReplyHeaders,
} from "./http/route.ts";
export type { RouteDocs, ResponseDoc, RequestExample, OpenApiSecurityScheme } from "./http/route-docs.ts";
export { openApiDocument, oauthScheme, type OpenApiOptions } from "./openapi/openapi-document.ts";
export { OPENAPI_PATH, DOCS_PATH } from "./openapi/api-reference.ts";
export { HttpError, badRequest, invalidFields, unauthorized, forbidden, notFound, conflict, errorBody, type ErrorDetail } from "./http/errors.ts";
export { HttpCore, firstHeader, type HandleOptions, type HttpCoreOptions, type RouteLookup } from "./http/http-core.ts";
export { neutralFromFetch, fetchResponse, pathAndQuery, type FetchRequestInfo } from "./http/fetch.ts";
export type { NeutralRequest, NeutralResponse, RequestBody } from "./http/neutral.ts";
export type { InjectRequest, InjectResponse } from "./http/inject.ts";
export { parseOrThrow, plainObject, issuesToDetails, queryToObject, singleQueryParam, type RawQuery } from "./http/validation.ts";
export { readLimited, decodeUtf8, mediaType, parseFormText, payloadTooLarge } from "./http/body.ts";
export { escapeHtml, htmlPage } from "./http/html.ts";

export { ACCOUNTS, type Accounts, type Company } from "./auth/accounts.ts";
export { isV1Credential, type Principal, type CredentialKind } from "./auth/principal.ts";
export { SCOPES, SCOPE_DESCRIPTIONS, isScope, parseScopes, type Scope } from "./auth/scopes.ts";
export { generateSecret, hashSecret, safeEqual, sign } from "./auth/secrets.ts";
export { RateLimiter, DEFAULT_RATE_LIMITS, type RateDecision } from "./auth/rate-limiter.ts";

export { Jobs, JOBS, DEFAULT_JOB_SETTINGS, type EnqueueOptions, type JobListOptions, type JobQueueStats, type JobSettings, type Retries } from "./jobs/jobs.ts";
export { PermanentJobError, RunLaterError, type JobRecord, type JobStatus } from "./jobs/job-record.ts";
export type { JobDefinition, JobHandler, JobContext, JobOutcome, JobRunnerSettings, BatchHandler, BatchedJob, BatchContext } from "./jobs/job-definition.ts";
export { RowDrains, nextDueAt, type FreshRows, type QueuedRow, type RowDrainSpec } from "./jobs/row-drains.ts";

export { EventBus, type ReachkitEvents, type EventName, type EventHandler } from "./events/event-bus.ts";
export { jsonLogger, silentLogger, isLogLevel, redactLogText, type JsonLoggerOptions } from "./logging/json-logger.ts";

export { runCli, type CliEnvironment } from "./cli/run-cli.ts";
export { cliCommands } from "./cli/core-commands.ts";
export {
  CliUsageError,
  companyOption,
  stringOption,
  requiredOption,
  listOption,
  openCompanyKit,
  refusalsAsUsageErrors,
  type CliCommand,
  type CliContext,
  type CliOption,
  type CliArgument,
  type CliResult,
  type CliValues,
} from "./cli/command.ts";
export { formatFields, formatTable } from "./cli/format.ts";

export {
  Outbox,
  OUTBOX,
  OUTBOX_SEND_JOB,
  DEFAULT_MESSAGING_SETTINGS,
  MAX_OUTBOX_PAGE,
  type MessagingSettings,
  type OutboundMessage,
  type OutboxListOptions,
  type OutboxPageQuery,
} from "./messaging/outbox.ts";
export { OUTBOX_DRAIN_JOB, type DrainPayload } from "./messaging/outbox-drains.ts";
export type { OutboundEmailMessage } from "./messaging/outbound-email.ts";
export { OUTBOX_STATUSES, channelOf, type OutboxMessage, type OutboxStatus, type OutboxChannel } from "./messaging/outbox-record.ts";
export {
  nextDeliveryStatus,
  type DeliveryStatus,
  type ReportedStatus,
  type DeliveryReceipt,
  type MessageStatusEvent,
  type RecipientOptedOutEvent,
} from "./messaging/delivery-status.ts";
export { fillPlaceholders, placeholdersOf, fillTemplate, type FilledTemplate } from "./messaging/placeholders.ts";
export { LINK_SHORTENER, KEEP_LINKS, type LinkShortener, type LinkContext } from "./messaging/link-shortener.ts";
