import { defineToken } from "../../src/index.ts";
import type { DocumentCache } from "./graphql-plugin.ts";
import type { QueryLimits } from "./limits.ts";

const PROVIDER = "reachkit/plugins/graphql (graphqlPlugin)";
/** The plugin's query limits, defaults applied. */
export const GRAPHQL_LIMITS = defineToken<QueryLimits>("GraphqlLimits", [PROVIDER]);
export const DOCUMENT_CACHE = defineToken<DocumentCache>("GraphqlDocumentCache", [PROVIDER]);
