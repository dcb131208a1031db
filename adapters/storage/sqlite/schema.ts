import Database from "better-sqlite3";
import { UniqueConstraintError, type CollectionSpec, type IndexSpec } from "../../../src/index.ts";
import { indexPrefix, isDeclaredIndexName, parseSpecs, type IndexDeclaration, type NamedIndex } from "../shared/documents.ts";
import { columnFields, columnName, fieldColumns, fieldOfColumn, WriteSql, type FieldColumn } from "./columns.ts";

export const LEDGER_TABLE = "_reachkit_schema";
/**
 * Bumped when the DDL generated from a spec changes shape; recorded in the ledger.
 * 1: indexes on json_extract expressions. 2: indexed fields in columns (columns.ts).
 */
export const SCHEMA_VERSION = 2;

/** A collection as this handle knows it: its columns, and enough to name violated unique indexes. */
export interface DeclaredCollection {
  name: string;
  indexes: NamedIndex[];
  largeDocuments: boolean;
  /** Fields kept in columns to be read without their documents (CollectionSpec.fieldsReadAlone). */
  fieldsReadAlone: string[];
  /** The indexed fields' columns and those read alone: what every write fills and what queries read for these fields. */
  columns: FieldColumn[];
  /** The same columns by field. */
  columnOf: ReadonlyMap<string, FieldColumn>;
  writes: WriteSql;
}

/** Deterministic, so a later run finds (and can drop) what an earlier one created. */
export function indexName(collection: string, index: IndexSpec): string {
  return `${indexPrefix({ unique: index.unique === true, sparse: index.sparse === true })}_${collection}__${index.fields.join("__")}`;
}

/** Validates specs, merges repeated names and names their indexes. */
export function normalizeSpecs(specs: readonly CollectionSpec[]): DeclaredCollection[] {
  return parseSpecs(specs).map((collection) => {
    const indexes: NamedIndex[] = [];
    for (const index of collection.indexes) {
      const name = indexName(collection.name, index);
      // SQLite identifiers are case-insensitive: fields "Email" and "email" would share an index name.
      const clash = indexes.find((i) => i.name.toLowerCase() === name.toLowerCase());
      if (clash === undefined) {
        indexes.push({ name, fields: index.fields, unique: index.unique, sparse: index.sparse });
      } else if (clash.name !== name) {
        throw new Error(`collection ${collection.name}: indexes ${clash.name} and ${name} differ only by case`);
      }
    }
    const columns = fieldColumns(columnFields(indexes, collection.fieldsReadAlone));
    // SQLite identifiers are case-insensitive: fields "Email" and "email" would share a column.
    const byLowerName = new Map<string, string>();
    for (const { field } of columns) {
      const other = byLowerName.get(field.toLowerCase());
      if (other !== undefined) throw new Error(`collection ${collection.name}: indexed fields ${other} and ${field} differ only by case`);
      byLowerName.set(field.toLowerCase(), field);
    }
    return {
      name: collection.name,
      indexes,
      largeDocuments: collection.largeDocuments,
      fieldsReadAlone: collection.fieldsReadAlone,
      columns,
      columnOf: new Map(columns.map((column) => [column.field, column])),
      writes: new WriteSql(collection.name, columns),
    };
  });
}

/**
 * An index's columns. The id ends every index, as the primary key ends those of a WITHOUT ROWID table on its own: in a
 * rowid table (large documents) it is added to each index but a unique one, so that a query by the index's fields in
 * id order (a webhook's deliveries after one, newest first) reads the index in order rather than sorting every row
 * that matches.
 */
function indexColumns(collection: DeclaredCollection, index: NamedIndex): string[] {
  const columns = index.fields.map(columnName);
  return collection.largeDocuments && !index.unique ? [...columns, "id"] : columns;
}

/**
 * A sparse index is a partial one. SQLite reads through it only for a query whose WHERE implies each
 * `IS NOT NULL` of its own: a comparison (=, IN, <, >...) or an IS NOT NULL of each of its columns.
 */
function indexDdl(collection: DeclaredCollection, index: NamedIndex): string {
  const columns = indexColumns(collection, index).map((column) => `"${column}"`);
  const kind = index.unique ? "UNIQUE INDEX" : "INDEX";
  // Of the fields' columns alone (the id is never null).
  const partial = index.sparse ? ` WHERE ${index.fields.map((f) => `"${columnName(f)}" IS NOT NULL`).join(" AND ")}` : "";
  return `CREATE ${kind} IF NOT EXISTS "${index.name}" ON "${collection.name}" (${columns.join(", ")})${partial}`;
}

/** Whether the database's index `name` is built on other columns than `index` is. */
function builtOtherwise(db: Database.Database, collection: DeclaredCollection, index: NamedIndex, name: string): boolean {
  const built = (db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).pluck().all(name) as Array<string | null>).join("\u0000");
  return built !== indexColumns(collection, index).join("\u0000");
}

/**
 * The fields whose columns the last declaration kept up to date, from the
 * ledger: none before schema version 2 (expression indexes, no columns).
 */
function maintainedFields(db: Database.Database, collection: string): Set<string> {
  const spec = db.prepare(`SELECT spec FROM "${LEDGER_TABLE}" WHERE collection = ?`).pluck().get(collection);
  if (typeof spec !== "string") return new Set();
  const recorded = JSON.parse(spec) as { version?: number; indexes?: IndexDeclaration[]; fieldsReadAlone?: string[] };
  if ((recorded.version ?? 1) < 2 || !Array.isArray(recorded.indexes)) return new Set();
  return new Set(columnFields(recorded.indexes, recorded.fieldsReadAlone ?? []));
}

/**
 * Adds the missing columns and fills every column the last declaration did
 * not keep up to date (new, or left behind when its index was dropped) from
 * the documents, with the very expression the column stands for.
 */
function applyColumns(db: Database.Database, collection: DeclaredCollection): void {
  const { name } = collection;
  const maintained = maintainedFields(db, name);
  const present = new Set(
    (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]).map((c) => c.toLowerCase()),
  );
  for (const column of collection.columns) {
    // No declared type: BLOB affinity stores each value as bound, like json_extract's result.
    if (!present.has(columnName(column.field).toLowerCase())) db.exec(`ALTER TABLE "${name}" ADD COLUMN ${column.sql}`);
    if (!maintained.has(column.field)) {
      db.exec(`UPDATE "${name}" SET ${column.sql} = json_extract(doc, '$.${column.field}')`);
    }
  }
}

export function createLedger(db: Database.Database): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS "${LEDGER_TABLE}" (
       collection TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL, updated_at INTEGER NOT NULL
     )`,
  );
}

/**
 * Creates the table and declared indexes, and drops this collection's indexes made by
 * an earlier declaration (isDeclaredIndexName) and no longer declared. The caller runs
 * it in a transaction.
 */
export function applyCollection(db: Database.Database, collection: DeclaredCollection): void {
  const { name } = collection;
  // WITHOUT ROWID keeps small documents in the primary-key tree itself; past about 1 KB (4 KB
  // pages) they would spill to overflow pages there, so large documents get a rowid table.
  const layout = collection.largeDocuments ? "" : " WITHOUT ROWID";
  // A new table gets its columns before doc: a row's short values then come before its long one.
  const columns = collection.columns.map((c) => `${c.sql}, `).join("");
  db.exec(`CREATE TABLE IF NOT EXISTS "${name}" (id TEXT PRIMARY KEY NOT NULL, ${columns}doc TEXT NOT NULL)${layout}`);
  const declared = new Map(collection.indexes.map((index) => [index.name.toLowerCase(), index]));
  const existing = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`)
    .pluck()
    .all(name) as string[];
  const ours = (index: string) => isDeclaredIndexName(index, `${name}__`);
  for (const index of existing.filter(ours)) {
    // No longer declared, or built on other columns by an earlier version: on json_extract expressions (schema
    // version 1, whose columns have no name), or without the id at the end in a rowid table.
    const wanted = declared.get(index.toLowerCase());
    if (wanted === undefined || builtOtherwise(db, collection, wanted, index)) db.exec(`DROP INDEX "${index}"`);
  }
  applyColumns(db, collection);
  for (const index of collection.indexes) {
    const owner = db
      .prepare(`SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE`)
      .pluck()
      .get(index.name);
    if (owner !== undefined && owner !== name) {
      // IF NOT EXISTS would silently skip it: "ix_a___x" is both a(_x) and a_(x).
      throw new Error(`collection ${name}: index name ${index.name} is already used by collection ${String(owner)}`);
    }
    try {
      db.exec(indexDdl(collection, index));
    } catch (error) {
      throw toUniqueError(error, collection) ?? error;
    }
  }
  const spec = JSON.stringify({
    version: SCHEMA_VERSION,
    indexes: collection.indexes.map((i) => ({ fields: i.fields, unique: i.unique, ...(i.sparse ? { sparse: true } : {}) })),
    ...(collection.largeDocuments ? { largeDocuments: true } : {}),
    ...(collection.fieldsReadAlone.length > 0 ? { fieldsReadAlone: collection.fieldsReadAlone } : {}),
  });
  // Only a real change moves updated_at, so the ledger reads as a history of DDL changes.
  db.prepare(
    `INSERT INTO "${LEDGER_TABLE}" (collection, spec, updated_at) VALUES (?, ?, ?)
     ON CONFLICT(collection) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at
     WHERE spec IS NOT excluded.spec`,
  ).run(name, spec, Date.now());
}

/** Maps SQLite's constraint errors to the port's typed error; undefined for anything else. */
export function toUniqueError(error: unknown, collection: DeclaredCollection): UniqueConstraintError | undefined {
  if (!(error instanceof Database.SqliteError)) return undefined;
  if (error.code === "SQLITE_CONSTRAINT_PRIMARYKEY") return new UniqueConstraintError(collection.name, ["id"]);
  if (error.code !== "SQLITE_CONSTRAINT_UNIQUE") return undefined;
  // Every index is built on columns (expression indexes are rebuilt at declaration), and SQLite names
  // the columns of the one violated: "UNIQUE constraint failed: people.f_team, people.f_age".
  const failed = /UNIQUE constraint failed: (.+)$/.exec(error.message);
  if (failed === null) return new UniqueConstraintError(collection.name, ["id"]);
  return new UniqueConstraintError(collection.name, failed[1].split(", ").map((column) => fieldOfColumn(column.slice(column.indexOf(".") + 1))));
}
