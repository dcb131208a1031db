import { JsonText } from "../../../src/index.ts";
import { isPlainObject } from "../shared/documents.ts";
import { columnValueSql, pushColumnParams, type FieldColumn } from "./columns.ts";
import type { DeclaredCollection } from "./schema.ts";
import { inPlaceholders, ShapeCache, type ShapeNode } from "./shape-cache.ts";

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
  /**
   * `sets` reading its parameters from a row of `VALUES` named `v` instead, the row's first column being
   * the document's id (`v.column2` for the first parameter): the SET clause of an `UPDATE ... FROM (VALUES ...)`
   * that patches many rows each its own way (updateEach). The same text for every patch of one shape.
   */
  setsFromValues: string;
  params: unknown[];
  /**
   * What each row's write counts towards the checkpoints (BackgroundCheckpoints.noteWritten): the patch's
   * JSON, an estimate short of the rewritten document's length, which SQLite alone knows.
   */
  bytes: number;
}

/**
 * The SET clauses of a collection's patches, by shape (built once per shape: hot paths run a few), with
 * the columns each sets; bounded, as field names may vary.
 */
const shapes = new ShapeCache(2_000);
const shapeOf = new WeakMap<ShapeNode, PatchShape>();
const MERGE = Symbol("one merge patch");
const REMOVE = Symbol("removed field");
const SET = Symbol("set field");

/**
 * The SET clause of `patch`, or undefined for a patch that names `id` (whose
 * check against each document's id takes the row-by-row path).
 *
 * Each value is written as `JSON.stringify` writes it; a value `JSON.stringify`
 * leaves out (undefined, a function) removes its field, as it would from a
 * rewritten document. A patch whose values are neither objects (which a merge
 * patch would merge into the stored ones rather than replace), null (which it
 * would remove) nor {@link JsonText} is bound as one JSON object for
 * `json_patch`, its removed fields null: SQLite parses and writes the document
 * once, where a `json_remove` and a `json_set` of one bound path and value per
 * field (what the other patches bind: `$."<field>"`, the field's JSON escapes,
 * and `json(?)`) parse it twice and each value again. Only the columns of
 * fields the patch names are set: an UPDATE rewrites the index entries of every
 * column it sets.
 */
export function patchSql(collection: DeclaredCollection, patch: unknown): PatchSql | undefined {
  if (!isPlainObject(patch)) throw new TypeError("a patch must be an object");
  if (Object.hasOwn(patch, "id")) return undefined;
  const fields = Object.keys(patch);
  // A merge patch's JSON is the whole patch's JSON.stringify, which would write what a toJSON of the patch answers.
  const hasToJson = "toJSON" in patch;
  if (!hasToJson && hasOnlyScalars(patch, fields)) return mergePatchSql(collection, patch, fields, (index) => patch[fields[index]!] === undefined);
  const texts = fields.map((field) => {
    const value = patch[field];
    return value instanceof JsonText ? value.text : (JSON.stringify(value) as string | undefined);
  });
  const merge = !hasToJson && fields.every((field, index) => !(patch[field] instanceof JsonText) && (texts[index] === undefined || (texts[index] !== "null" && !texts[index]!.startsWith("{"))));
  return merge ? mergePatchSql(collection, patch, fields, (index) => texts[index] === undefined) : setPatchSql(collection, patch, fields, texts);
}

/**
 * Whether every value of the patch is a string, a boolean, a finite number or undefined (a webhook attempt's
 * outcome, a status change): a merge patch, told without writing each value's JSON first.
 */
function hasOnlyScalars(patch: Record<string, unknown>, fields: readonly string[]): boolean {
  for (const field of fields) {
    const value = patch[field];
    const type = typeof value;
    if (type !== "string" && type !== "boolean" && type !== "undefined" && !(type === "number" && Number.isFinite(value))) return false;
  }
  return true;
}

/**
 * A merge patch: its JSON is one `JSON.stringify` of the whole patch (which leaves out the fields it removes)
 * followed by the removed fields as nulls, and its shape, when its fields are those of the collection's last
 * merge patch (a group's patches share theirs), is found without walking the shape tree. Field by field, the
 * texts, the tree's steps and the text's assembly took about 6 µs of a webhook delivery.
 */
function mergePatchSql(collection: DeclaredCollection, patch: Record<string, unknown>, fields: readonly string[], removes: (index: number) => boolean): PatchSql {
  const shape = mergeShape(collection, fields);
  let text = JSON.stringify(patch);
  let removed = "";
  for (let index = 0; index < fields.length; index++) if (removes(index)) removed += shape.removals[index];
  if (removed !== "") text = text === "{}" ? `{${removed.slice(1)}}` : `${text.slice(0, -1)}${removed}}`;
  const params: unknown[] = [text];
  pushColumnParams(params, patch, shape.columns);
  return { sets: shape.sets, setsFromValues: shape.setsFromValues, params, bytes: text.length };
}

/** A merge patch's shape, and what each of its fields adds to its JSON when removed (`,"<field>":null`). */
interface MergeShape extends PatchShape {
  fields: readonly string[];
  removals: readonly string[];
}

/** By collection, the shape of its last merge patch. */
const lastMergeShapes = new WeakMap<DeclaredCollection, MergeShape>();

function mergeShape(collection: DeclaredCollection, fields: readonly string[]): MergeShape {
  const last = lastMergeShapes.get(collection);
  if (last !== undefined && sameFields(last.fields, fields)) return last;
  let node = shapes.root(collection).to(MERGE);
  for (const field of fields) node = node.to(field);
  let shape = shapeOf.get(node) as MergeShape | undefined;
  if (shape === undefined) {
    shape = { ...patchShape(collection, fields), fields, removals: fields.map((field) => `,${JSON.stringify(field)}:null`) };
    shapes.store(node, shape.sets);
    shapeOf.set(node, shape);
  }
  lastMergeShapes.set(collection, shape);
  return shape;
}

function sameFields(known: readonly string[], fields: readonly string[]): boolean {
  if (known.length !== fields.length) return false;
  for (let index = 0; index < fields.length; index++) if (known[index] !== fields[index]) return false;
  return true;
}

/** A patch as a `json_remove` of its removed fields' paths and a `json_set` of the others' paths and JSON texts. */
function setPatchSql(collection: DeclaredCollection, patch: Record<string, unknown>, fields: readonly string[], texts: ReadonlyArray<string | undefined>): PatchSql {
  let node = shapes.root(collection).to(SET);
  for (let index = 0; index < fields.length; index++) node = node.to(fields[index]).to(texts[index] === undefined ? REMOVE : SET);
  let shape = shapeOf.get(node);
  if (shape === undefined) {
    shape = patchShape(collection, fields, texts);
    shapes.store(node, shape.sets);
    shapeOf.set(node, shape);
  }
  const removals: string[] = [];
  const assignments: string[] = [];
  let bytes = 0;
  for (let index = 0; index < fields.length; index++) {
    const path = `$.${JSON.stringify(fields[index])}`;
    const json = texts[index];
    if (json === undefined) removals.push(path);
    else assignments.push(path, json);
    bytes += path.length + (json?.length ?? 0);
  }
  const params: unknown[] = [...removals, ...assignments];
  pushColumnParams(params, patch, shape.columns);
  return { sets: shape.sets, setsFromValues: shape.setsFromValues, params, bytes };
}

/** The SET clause of a patch shape, and the columns of the fields it names (their parameters follow the document's). */
interface PatchShape {
  sets: string;
  setsFromValues: string;
  columns: readonly FieldColumn[];
}

/** A merge patch's shape, or (given its values' texts, undefined for a removed field) a json_remove and json_set patch's. */
function patchShape(collection: DeclaredCollection, fields: readonly string[], setTexts?: ReadonlyArray<string | undefined>): PatchShape {
  const columns = collection.columns.filter((column) => fields.includes(column.field));
  const setsWith = (parameter: () => string) => {
    let doc = "doc";
    if (setTexts === undefined) doc = `json_patch(doc, ${parameter()})`;
    else {
      const removals = setTexts.filter((text) => text === undefined).length;
      const assignments = setTexts.length - removals;
      if (removals > 0) doc = `json_remove(${doc}${Array.from({ length: removals }, () => `, ${parameter()}`).join("")})`;
      if (assignments > 0) doc = `json_set(${doc}${Array.from({ length: assignments }, () => `, ${parameter()}, json(${parameter()})`).join("")})`;
    }
    return [`doc = ${doc}`, ...columns.map((column) => `${column.sql} = ${columnValueSql(parameter(), parameter())}`)].join(", ");
  };
  let column = 1;
  return { sets: setsWith(() => "?"), setsFromValues: setsWith(() => `v.column${++column}`), columns };
}

/** The most rows of one updateEach statement: a power of two (see inPlaceholders), within SQLite's 32,766 parameters. */
const PATCH_ROWS_PER_STATEMENT = 256;

/** How many rows of patches with `paramsPerRow` parameters (the id's included) one statement takes. */
export function rowsPerStatement(paramsPerRow: number): number {
  let rows = PATCH_ROWS_PER_STATEMENT;
  while (rows > 1 && rows * paramsPerRow > 32_766) rows /= 2;
  return rows;
}

/**
 * One UPDATE ... FROM (VALUES ...) of rows whose patches share one shape (their `setsFromValues`), each row
 * its document's id and its patch's parameters. The list is padded to a length of inPlaceholders, so that few
 * texts are prepared, with rows of nulls: a null id matches no document, where a repeated row was joined and
 * written again (the webhooks' outcome groups of about 50 rows, padded to 64, cost a third more a row).
 */
export function patchRowsSql(table: string, rows: ReadonlyArray<{ id: string; update: PatchSql }>): { sql: string; params: unknown[]; bytes: number } {
  const paramsPerRow = 1 + rows[0]!.update.params.length;
  const placeholders = inPlaceholders(rows.length);
  const params: unknown[] = [];
  let bytes = 0;
  for (const { id, update } of rows) {
    params.push(id);
    for (const param of update.params) params.push(param);
    bytes += update.bytes;
  }
  for (let index = params.length, end = placeholders * paramsPerRow; index < end; index++) params.push(null);
  return { sql: valuesUpdateSql(table, rows[0]!.update.setsFromValues, paramsPerRow, placeholders), params, bytes };
}

/** The texts of updateEach's statements, by table, SET clause and row count; emptied when it holds too many (shapes vary). */
const valuesUpdates = new Map<string, string>();
const VALUES_UPDATES_KEPT = 500;

function valuesUpdateSql(table: string, setsFromValues: string, paramsPerRow: number, rows: number): string {
  const key = `${table} ${rows} ${setsFromValues}`;
  let sql = valuesUpdates.get(key);
  if (sql === undefined) {
    const row = `(${Array.from({ length: paramsPerRow }, () => "?").join(", ")})`;
    sql = `UPDATE ${table} SET ${setsFromValues} FROM (VALUES ${Array.from({ length: rows }, () => row).join(", ")}) AS v WHERE ${table}.id = v.column1`;
    if (valuesUpdates.size >= VALUES_UPDATES_KEPT) valuesUpdates.clear();
    valuesUpdates.set(key, sql);
  }
  return sql;
}
