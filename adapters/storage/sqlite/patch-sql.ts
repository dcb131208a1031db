import { JsonText } from "../../../src/index.ts";
import { isPlainObject } from "../shared/documents.ts";
import { COLUMN_VALUE_SQL, pushColumnParams } from "./columns.ts";
import type { DeclaredCollection } from "./schema.ts";

/**
 * A patch as the SET clause of one UPDATE over every row it applies to. Read,
 * parsed, patched in JS and written back one statement per row, an
 * `updateWhere` marking a page of due rows in flight was among the costliest
 * SQLite statements of a webhook delivery; SQLite patches each row's JSON in
 * place instead.
 */
export interface PatchSql {
  /** `doc = ...` and the assignments of the columns of the fields the patch names. */
  sets: string;
  params: unknown[];
  /**
   * What each row's write counts towards the checkpoints (BackgroundCheckpoints.noteWritten): the patch's
   * JSON, an estimate short of the rewritten document's length, which SQLite alone knows.
   */
  bytes: number;
}

/**
 * The SET clause of `patch`, or undefined for a patch that names `id` (whose
 * check against each document's id takes the row-by-row path).
 *
 * Each value is bound as its JSON text through `json(?)`, so it is stored as
 * `JSON.stringify` writes it; a value `JSON.stringify` leaves out (undefined, a
 * function) removes its field, as it would from a rewritten document. Each
 * field is named by a bound path `$."<field>"` with the field's JSON
 * escapes, which SQLite reads back (a field with `.`, `[`, `"` or `\` is that
 * one top-level field). Only the columns of fields the patch names are set:
 * an UPDATE rewrites the index entries of every column it sets.
 */
export function patchSql(collection: DeclaredCollection, patch: unknown): PatchSql | undefined {
  if (!isPlainObject(patch)) throw new TypeError("a patch must be an object");
  if (Object.hasOwn(patch, "id")) return undefined;
  const removals: string[] = [];
  const assignments: string[] = [];
  const named = new Set<string>();
  let bytes = 0;
  for (const [field, value] of Object.entries(patch)) {
    named.add(field);
    const path = `$.${JSON.stringify(field)}`;
    const json = value instanceof JsonText ? value.text : (JSON.stringify(value) as string | undefined);
    if (json === undefined) removals.push(path);
    else assignments.push(path, json);
    bytes += path.length + (json?.length ?? 0);
  }
  let doc = "doc";
  if (removals.length > 0) doc = `json_remove(${doc}${", ?".repeat(removals.length)})`;
  if (assignments.length > 0) doc = `json_set(${doc}${", ?, json(?)".repeat(assignments.length / 2)})`;
  const columns = collection.columns.filter((column) => named.has(column.field));
  const params: unknown[] = [...removals, ...assignments];
  pushColumnParams(params, patch, columns);
  const sets = [`doc = ${doc}`, ...columns.map((column) => `${column.sql} = ${COLUMN_VALUE_SQL}`)].join(", ");
  return { sets, params, bytes };
}
