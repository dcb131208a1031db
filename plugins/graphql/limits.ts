import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from "graphql";

/** How big a query may be. Configurable per plugin; documented in the README. */
export interface QueryLimits {
  /** Characters of the query text. */
  maxQueryLength: number;
  /** Lexical tokens (the parser stops early above it). */
  maxTokens: number;
  /** Nesting of fields, fragments expanded. */
  maxDepth: number;
  /** Fields to resolve, fragments expanded as often as they are spread. */
  maxFields: number;
  /** `user` fields (aliases included): each is one eligibility lookup. */
  maxUsers: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxQueryLength: 100_000,
  maxTokens: 10_000,
  maxDepth: 15,
  maxFields: 2_000,
  maxUsers: 100,
};

interface Cost {
  depth: number;
  fields: number;
  users: number;
}

const ZERO: Cost = { depth: 0, fields: 0, users: 0 };

/**
 * Measures the operation (fragments memoised, so a fragment spread many times
 * is measured once and counted as often as it is spread) and returns one error
 * per limit exceeded. Runs after standard validation, which rules out fragment cycles.
 */
export function checkLimits(document: DocumentNode, limits: QueryLimits): GraphQLError[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const measured = new Map<string, Cost>();

  const measure = (set: SelectionSetNode): Cost => {
    let depth = 0;
    let fields = 0;
    let users = 0;
    for (const selection of set.selections) {
      let cost: Cost;
      if (selection.kind === Kind.FIELD) {
        const child = selection.selectionSet ? measure(selection.selectionSet) : ZERO;
        cost = { depth: child.depth + 1, fields: child.fields + 1, users: child.users + (selection.name.value === "user" ? 1 : 0) };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost = measure(selection.selectionSet);
      } else {
        const name = selection.name.value;
        let known = measured.get(name);
        if (!known) {
          const fragment = fragments.get(name);
          known = fragment ? measure(fragment.selectionSet) : ZERO;
          measured.set(name, known);
        }
        cost = known;
      }
      depth = Math.max(depth, cost.depth);
      fields += cost.fields;
      users += cost.users;
    }
    return { depth, fields, users };
  };

  let total = ZERO;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const cost = measure(definition.selectionSet);
    total = { depth: Math.max(total.depth, cost.depth), fields: Math.max(total.fields, cost.fields), users: Math.max(total.users, cost.users) };
  }
  const errors: GraphQLError[] = [];
  const tooBig = (message: string) => errors.push(new GraphQLError(message, { extensions: { code: "QUERY_TOO_COMPLEX" } }));
  if (total.depth > limits.maxDepth) tooBig(`the query is nested ${total.depth} levels deep; at most ${limits.maxDepth} are allowed`);
  if (total.fields > limits.maxFields) tooBig(`the query selects ${total.fields} fields; at most ${limits.maxFields} are allowed`);
  if (total.users > limits.maxUsers) tooBig(`the query asks for ${total.users} users; at most ${limits.maxUsers} are allowed`);
  return errors;
}
