import { createHash } from "node:crypto";
import type pg from "pg";
import { UniqueConstraintError, type CollectionSpec } from "../../../src/index.ts";
import { indexPrefix, isDeclaredIndexName, parseSpecs, type IndexDeclaration, type NamedIndex } from "../shared/documents.ts";
import { keyExpr } from "./where-sql.ts";

export const LEDGER_TABLE = "_reachkit_schema";
/** Bumped when the DDL generated from a spec changes shape; recorded in the ledger. */
export const SCHEMA_VERSION = 1;
/** Several processes may start at once: schema changes take this advisory lock, one at a time. */
const SCHEMA_LOCK = 0x7265_6163;
/** PostgreSQL truncates longer identifiers, so longer index names are shortened with a hash. */
const MAX_IDENTIFIER = 63;

export interface DeclaredCollection {
  name: string;
  indexes: NamedIndex[];
}

/** Deterministic, so a later run finds (and can drop) what an earlier one created. */
export function indexName(collection: string, index: IndexDeclaration): string {
  const prefix = indexPrefix(index);
  const name = `${prefix}_${collection}__${index.fields.join("__")}`;
  if (name.length <= MAX_IDENTIFIER) return name;
  return `${prefix}_${collection.slice(0, 30)}__${createHash("sha256").update(name).digest("hex").slice(0, 24)}`;
}

export function normalizeSpecs(specs: readonly CollectionSpec[]): DeclaredCollection[] {
  return parseSpecs(specs).map((collection) => ({
    name: collection.name,
    indexes: collection.indexes.map((index) => ({ ...index, name: indexName(collection.name, index) })),
  }));
}

/**
 * The sortable key of a JSON value (see where-sql.ts for its byte layout; `keyOf` there computes the same in
 * JavaScript). Numbers: the float's bits, sign bit set for positives and every bit flipped for negatives, so
 * that bytes compare like the numbers. IMMUTABLE, so expression indexes can use it.
 *
 * PL/pgSQL, not SQL: a SQL function whose body is a CASE cannot be inlined, and PostgreSQL then runs it through
 * its SQL-function executor at some 50-100 µs a call, while PL/pgSQL evaluates the same expression in about 2 µs.
 * Every index entry written and every row a query sorts or rechecks computes keys, so as SQL functions they made
 * each job claim, insert and update cost milliseconds (a bitmap scan of 1,500 queued jobs took 100-200 ms). The
 * keys are the same bytes either way, so indexes built by the SQL version stay valid.
 */
const KEY_FUNCTIONS = `
CREATE OR REPLACE FUNCTION reachkit_number_key(x float8) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN '\\x01'::bytea || CASE WHEN x >= 0
    THEN int8send(('x' || encode(float8send(abs(x)), 'hex'))::bit(64)::int8 # (-9223372036854775808)::int8)
    ELSE int8send(~(('x' || encode(float8send(x), 'hex'))::bit(64)::int8))
  END;
END
$$;
CREATE OR REPLACE FUNCTION reachkit_key(v jsonb) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN CASE jsonb_typeof(v)
    WHEN 'string' THEN '\\x02'::bytea || convert_to(v #>> '{}', 'UTF8')
    WHEN 'number' THEN reachkit_number_key(v::float8)
    WHEN 'boolean' THEN reachkit_number_key(CASE WHEN v::boolean THEN 1 ELSE 0 END)
    WHEN 'null' THEN NULL
    ELSE '\\x02'::bytea || convert_to(v::text, 'UTF8')
  END;
END
$$;`;

/**
 * Creates the key functions, the ledger, the tables and declared indexes, and
 * drops each collection's indexes made by an earlier declaration (isDeclaredIndexName) and no longer declared:
 * in one transaction holding the schema lock (several processes may start at
 * once), in two round trips (DDL statement by statement made starting a test
 * kit take most of a second).
 */
export async function applyCollections(
  client: pg.ClientBase,
  collections: readonly DeclaredCollection[],
  schema: string | undefined,
): Promise<void> {
  const prelude = [
    "BEGIN",
    `SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`,
    ...(schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS "${schema}"`]),
    KEY_FUNCTIONS,
    `CREATE TABLE IF NOT EXISTS "${LEDGER_TABLE}" (collection text PRIMARY KEY, spec text NOT NULL, updated_at bigint NOT NULL)`,
    `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()`,
  ];
  try {
    const results = (await client.query(prelude.join(";\n"))) as unknown as pg.QueryResult<ExistingIndex>[];
    const existing = results[results.length - 1].rows;
    const statements = collections.flatMap((collection) => collectionDdl(client, collection, existing));
    try {
      await client.query([...statements, "COMMIT"].join(";\n"));
    } catch (error) {
      const index = (error as { constraint?: unknown }).constraint;
      const owner = collections.find((c) => c.indexes.some((i) => i.name === index));
      throw (owner && toUniqueError(error, owner)) ?? error;
    }
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

interface ExistingIndex {
  tablename: string;
  indexname: string;
  indexdef: string;
}

/**
 * Whether an index ends with the id: each but a unique one does (from 2026-11-28), so that a query by its fields in id
 * order (a webhook's deliveries after one, or newest first) walks it in order rather than sorting every row that
 * matches (NULLS FIRST as the port's order, which ORDER BY says). An older one without it is built again.
 */
const endsWithId = (indexdef: string) => /, id NULLS FIRST\)( WHERE .*)?$/.test(indexdef);

function collectionDdl(client: pg.ClientBase, collection: DeclaredCollection, existing: readonly ExistingIndex[]): string[] {
  const { name } = collection;
  const statements = [`CREATE TABLE IF NOT EXISTS "${name}" (id text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL)`];
  const declared = new Map(collection.indexes.map((index) => [index.name, index]));
  for (const { tablename, indexname, indexdef } of existing) {
    if (tablename !== name || !isDeclaredIndexName(indexname)) continue;
    const wanted = declared.get(indexname);
    if (wanted === undefined || (!wanted.unique && !endsWithId(indexdef))) statements.push(`DROP INDEX "${indexname}"`);
  }
  for (const index of collection.indexes) {
    const owner = existing.find((e) => e.indexname === index.name);
    if (owner !== undefined && owner.tablename !== name) {
      // IF NOT EXISTS would silently skip it: "ix_a___x" is both a(_x) and a_(x).
      throw new Error(`collection ${name}: index name ${index.name} is already used by collection ${owner.tablename}`);
    }
    // NULLS FIRST: the index order is the port's sort order, so ORDER BY can walk it either way.
    const expressions = [...index.fields.map((f) => `${keyExpr(f)} NULLS FIRST`), ...(index.unique ? [] : ["id NULLS FIRST"])].join(", ");
    // A sparse index is a partial one; the planner proves a query's strict comparisons of each key imply its predicate.
    const partial = index.sparse ? ` WHERE ${index.fields.map((f) => `${keyExpr(f)} IS NOT NULL`).join(" AND ")}` : "";
    statements.push(`CREATE ${index.unique ? "UNIQUE INDEX" : "INDEX"} IF NOT EXISTS "${index.name}" ON "${name}" (${expressions})${partial}`);
  }
  const spec = JSON.stringify({
    version: SCHEMA_VERSION,
    indexes: collection.indexes.map((i) => ({ fields: i.fields, unique: i.unique, ...(i.sparse ? { sparse: true } : {}) })),
  });
  // Only a real change moves updated_at, so the ledger reads as a history of DDL changes.
  statements.push(
    `INSERT INTO "${LEDGER_TABLE}" (collection, spec, updated_at) VALUES (${client.escapeLiteral(name)}, ${client.escapeLiteral(spec)}, ${Date.now()})
     ON CONFLICT (collection) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at
     WHERE "${LEDGER_TABLE}".spec IS DISTINCT FROM excluded.spec`,
  );
  return statements;
}

const UNIQUE_VIOLATION = "23505";

/** Maps PostgreSQL's unique violations to the port's typed error; undefined for anything else. */
export function toUniqueError(error: unknown, collection: DeclaredCollection): UniqueConstraintError | undefined {
  if (typeof error !== "object" || error === null || (error as { code?: unknown }).code !== UNIQUE_VIOLATION) return undefined;
  const constraint = (error as { constraint?: unknown }).constraint;
  const declared = collection.indexes.find((i) => i.name === constraint);
  if (declared !== undefined) return new UniqueConstraintError(collection.name, declared.fields);
  for (const prefix of [false, true].map((sparse) => `${indexPrefix({ unique: true, sparse })}_${collection.name}__`)) {
    if (typeof constraint === "string" && constraint.startsWith(prefix)) {
      // Declared by another handle since we looked: the name still spells the fields.
      return new UniqueConstraintError(collection.name, constraint.slice(prefix.length).split("__"));
    }
  }
  return new UniqueConstraintError(collection.name, ["id"]);
}
