import { execute, GraphQLError, parse, validate, type DocumentNode, type ExecutionResult } from "graphql";
import * as v from "valibot";
import { ACCOUNTS, definePlugin, defineRoute, inject, injectable, jsonBody, plainObject, reply, type Logger } from "../../src/index.ts";
import { PROFILES_SERVICE } from "../profiles/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { EligibilityBatch } from "./eligibility-batch.ts";
import { checkLimits, DEFAULT_QUERY_LIMITS, type QueryLimits } from "./limits.ts";
import { graphqlDocs } from "./openapi.ts";
import { ProfileReader } from "./profile-fields.ts";
import { schema, type GraphqlContext } from "./schema.ts";
import { DOCUMENT_CACHE, GRAPHQL_LIMITS } from "./tokens.ts";

export interface GraphqlPluginOptions {
  limits?: Partial<QueryLimits>;
}

/** Parsed and validated documents by query text: clients send the same few queries again and again. */
const DOCUMENT_CACHE_SIZE = 200;

const isPlainObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `POST /v1/graphql` (interface 4.1): the subscription eligibilities of users
 * of the caller's company, and with the profiles plugin their external
 * identifiers, custom attributes and events. GraphQL errors answer 200 with `errors`; every
 * answer carries `extensions.traceId`. Introspection needs a valid token, like
 * every query.
 */
export function graphqlPlugin(options: GraphqlPluginOptions = {}) {
  const limits: QueryLimits = { ...DEFAULT_QUERY_LIMITS, ...options.limits };
  const bodySchema = plainObject({
    query: v.pipe(v.string("must be a string"), v.maxLength(limits.maxQueryLength, `must be at most ${limits.maxQueryLength} characters`)),
    variables: v.nullish(v.custom<Record<string, unknown>>(isPlainObject, "must be an object")),
    operationName: v.nullish(v.string("must be a string")),
  });
  return definePlugin({
    name: "graphql",
    requires: [SUBSCRIPTIONS_SERVICE, ACCOUNTS],
    register({ container }) {
      container.bind(GRAPHQL_LIMITS, { useValue: limits });
      container.bind(DOCUMENT_CACHE, { useClass: DocumentCache });
    },
    routes({ resolve, logger, container }) {
      const documents = resolve(DOCUMENT_CACHE);
      const subscriptions = resolve(SUBSCRIPTIONS_SERVICE);
      const accounts = resolve(ACCOUNTS);
      // The profile fields of a user answer as for an unknown person in a kit without the profiles plugin.
      const profiles = container.has(PROFILES_SERVICE) ? resolve(PROFILES_SERVICE) : undefined;
      return [
        defineRoute({
          method: "POST",
          path: "/v1/graphql",
          auth: { kind: "api" },
          body: jsonBody(bodySchema),
          summary: "Run a GraphQL query",
          docs: graphqlDocs,
          async handler({ body, principal, traceId }) {
            const extensions = { traceId };
            const prepared = documents.get(body.query);
            if (!("document" in prepared)) return reply.json(200, { errors: prepared.errors.map((e) => e.toJSON()), extensions });
            const contextValue: GraphqlContext = {
              companyId: principal.companyId,
              scopes: principal.scopes,
              eligibilities: new EligibilityBatch((users) => subscriptions.eligibilityOfMany(principal.companyId, users)),
              accounts,
              profiles: profiles && new ProfileReader(profiles, principal.companyId),
            };
            const result = (await execute({
              schema,
              document: prepared.document,
              contextValue,
              variableValues: body.variables ?? undefined,
              operationName: body.operationName ?? undefined,
            })) as ExecutionResult;
            const errors = result.errors?.map((error) => masked(error, traceId, logger).toJSON());
            return reply.json(200, { ...(errors ? { errors } : {}), ...("data" in result ? { data: result.data } : {}), extensions });
          },
        }),
      ];
    },
  });
}

/** An error a resolver did not mean to show (a bug, a storage failure) is logged and answered without its message. */
function masked(error: GraphQLError, traceId: string, logger: Logger): GraphQLError {
  if (!error.originalError || error.originalError instanceof GraphQLError) return error;
  logger.error("graphql resolver failed", { traceId, error: error.originalError });
  return new GraphQLError(`internal error; quote trace id ${traceId} when reporting it`, {
    nodes: error.nodes,
    path: error.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  });
}

type Prepared = { document: DocumentNode } | { errors: readonly GraphQLError[] };

/** Parses with a token limit, validates, checks the size limits; keeps the valid documents of recent query texts. */
@injectable()
export class DocumentCache {
  readonly #documents = new Map<string, DocumentNode>();

  constructor(@inject(GRAPHQL_LIMITS) private readonly limits: QueryLimits) {}

  get(query: string): Prepared {
    const cached = this.#documents.get(query);
    if (cached) return { document: cached };
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: this.limits.maxTokens });
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [error] };
      throw error;
    }
    const errors = validate(schema, document);
    if (errors.length > 0) return { errors };
    const tooBig = checkLimits(document, this.limits);
    if (tooBig.length > 0) return { errors: tooBig };
    if (this.#documents.size >= DOCUMENT_CACHE_SIZE) this.#documents.delete(this.#documents.keys().next().value as string);
    this.#documents.set(query, document);
    return { document };
  }
}
