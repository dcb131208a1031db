// The baseline: what reachkit's first save writes and indexes, by the plainest fast means (readline, JSON.parse,
// better-sqlite3 prepared statements, 1000 products per transaction, no validation). Per product, as reachkit's SQLite
// adapter lays it out (adapters/storage/sqlite/columns.ts, plugins/catalog/records.ts): a row of catalog_products (a
// rowid table: id primary key, the three indexed fields in columns of their own, the document with the line spliced
// in) under its unique (companyId, productId, version) index; and a hint row per variant in catalog_variants
// (WITHOUT ROWID). Usage: catalog-baseline.ts <file> <database>; prints "RESULT {...}".
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";

const [file, database] = process.argv.slice(2) as [string, string];
/** A company id as reachkit makes them, and the version of a first save. */
const companyId = randomUUID();
const version = 1;
const versionPrefix = `${companyId}:${String(version).padStart(10, "0")}:`;

const db = new Database(database);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`
  CREATE TABLE catalog_products (id TEXT PRIMARY KEY NOT NULL, f_companyId, f_productId, f_version, doc TEXT NOT NULL);
  CREATE UNIQUE INDEX ux_catalog_products__companyId__productId__version ON catalog_products (f_companyId, f_productId, f_version);
  CREATE TABLE catalog_variants (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL) WITHOUT ROWID;
`);
const insertProduct = db.prepare(
  `INSERT INTO catalog_products (id, f_companyId, f_productId, f_version, doc) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT(id) DO UPDATE SET f_companyId = excluded.f_companyId, f_productId = excluded.f_productId, f_version = excluded.f_version, doc = excluded.doc`,
);
const insertHint = db.prepare("INSERT INTO catalog_variants (id, doc) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET doc = excluded.doc");
const started = performance.now();
const cpuBefore = process.cpuUsage();
/** CPU time per product in each window of 100,000 products (bench/catalog.ts reports reachkit's beside it). */
const WINDOW_PRODUCTS = 100_000;
const cpuMicrosPerProductByWindow: number[] = [];
let windowStart = cpuBefore;
const endWindow = (products: number) => {
  const cpu = process.cpuUsage(windowStart);
  windowStart = process.cpuUsage();
  cpuMicrosPerProductByWindow.push(Math.round((cpu.user + cpu.system) / products));
};
let lines = 0;
let lineNum = 0;
db.exec("BEGIN");
for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
  lineNum++;
  if (line === "") continue;
  const product = JSON.parse(line) as { id: string; variants: Array<{ id: string }> };
  const id = `${versionPrefix}${product.id}`;
  const productId = JSON.stringify(product.id);
  const doc = `{"id":${JSON.stringify(id)},"companyId":"${companyId}","productId":${productId},"version":${version},"line":${lineNum},"product":${line}}`;
  insertProduct.run(id, companyId, product.id, BigInt(version), doc);
  for (const variant of product.variants) {
    const hintId = `${companyId}:${variant.id}`;
    insertHint.run(hintId, `{"id":${JSON.stringify(hintId)},"productId":${productId}}`);
  }
  if (++lines % 1000 === 0) {
    db.exec("COMMIT");
    db.exec("BEGIN");
  }
  if (lines % WINDOW_PRODUCTS === 0) endWindow(WINDOW_PRODUCTS);
}
db.exec("COMMIT");
if (lines % WINDOW_PRODUCTS !== 0) endWindow(lines % WINDOW_PRODUCTS);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
db.close();
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
console.log(
  `RESULT ${JSON.stringify({ lines, seconds, productsPerSecond: Math.round(lines / seconds), cpuSeconds, cpuMicrosPerProductByWindow, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}`,
);
