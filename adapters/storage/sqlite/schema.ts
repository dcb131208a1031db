import Database from "better-sqlite3";
import { UniqueConstraintError, type CollectionSpec, type IndexSpec } from "../../../src/ports/storage.ts";
import { parseSpecs, type NamedIndex } from "../shared/documents.ts";
import { fieldExpr } from "./where-sql.ts";

export const LEDGER_TABLE = "_reachkit_schema";
/** Bumped when the DDL generated from a spec changes shape; recorded in the ledger. */
export const SCHEMA_VERSION = 1;

/** A collection as this handle knows it: enough to name violated unique indexes. */
export interface DeclaredCollection {
  name: string;
  indexes: NamedIndex[];
  largeDocuments: boolean;
}

/** Deterministic, so a later run finds (and can drop) what an earlier one created. */
export function indexName(collection: string, index: IndexSpec): string {
  return `${index.unique === true ? "ux" : "ix"}_${collection}__${index.fields.join("__")}`;
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
        indexes.push({ name, fields: index.fields, unique: index.unique });
      } else if (clash.name !== name) {
        throw new Error(`collection ${collection.name}: indexes ${clash.name} and ${name} differ only by case`);
      }
    }
    return { name: collection.name, indexes, largeDocuments: collection.largeDocuments };
  });
}

function indexDdl(collection: string, index: NamedIndex): string {
  const expressions = index.fields.map((f) => fieldExpr(f)).join(", ");
  const kind = index.unique ? "UNIQUE INDEX" : "INDEX";
  return `CREATE ${kind} IF NOT EXISTS "${index.name}" ON "${collection}" (${expressions})`;
}

export function createLedger(db: Database.Database): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS "${LEDGER_TABLE}" (
       collection TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL, updated_at INTEGER NOT NULL
     )`,
  );
}

/**
 * Creates the table and declared indexes, and drops this collection's `ix_` /
 * `ux_` indexes that are no longer declared. The caller runs it in a transaction.
 */
export function applyCollection(db: Database.Database, collection: DeclaredCollection): void {
  const { name } = collection;
  // WITHOUT ROWID keeps small documents in the primary-key tree itself; past about 1 KB (4 KB
  // pages) they would spill to overflow pages there, so large documents get a rowid table.
  const layout = collection.largeDocuments ? "" : " WITHOUT ROWID";
  db.exec(`CREATE TABLE IF NOT EXISTS "${name}" (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)${layout}`);
  const wanted = new Set(collection.indexes.map((i) => i.name.toLowerCase()));
  const existing = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`)
    .pluck()
    .all(name) as string[];
  const ours = (index: string) => {
    const lower = index.toLowerCase();
    return lower.startsWith(`ix_${name}__`) || lower.startsWith(`ux_${name}__`);
  };
  for (const index of existing) {
    if (ours(index) && !wanted.has(index.toLowerCase())) db.exec(`DROP INDEX "${index}"`);
  }
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
      db.exec(indexDdl(name, index));
    } catch (error) {
      throw toUniqueError(error, collection) ?? error;
    }
  }
  const spec = JSON.stringify({
    version: SCHEMA_VERSION,
    indexes: collection.indexes.map((i) => ({ fields: i.fields, unique: i.unique })),
    ...(collection.largeDocuments ? { largeDocuments: true } : {}),
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
  const match = /index '([^']+)'/.exec(error.message);
  if (match === null) return new UniqueConstraintError(collection.name, ["id"]);
  const index = match[1];
  const declared = collection.indexes.find((i) => i.name.toLowerCase() === index.toLowerCase());
  if (declared !== undefined) return new UniqueConstraintError(collection.name, declared.fields);
  // Declared by another handle since we looked: the name still spells the fields.
  const prefix = `ux_${collection.name}__`;
  const fields = index.startsWith(prefix) ? index.slice(prefix.length).split("__") : [index];
  return new UniqueConstraintError(collection.name, fields);
}
