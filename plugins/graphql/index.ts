export { graphqlPlugin, type GraphqlPluginOptions } from "./graphql-plugin.ts";
export { DEFAULT_QUERY_LIMITS, type QueryLimits } from "./limits.ts";
export { schema } from "./schema.ts";
