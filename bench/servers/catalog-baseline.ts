// The baseline: a bare readline + JSON.parse + better-sqlite3 insert loop over the catalog file,
// one row per product keyed by its id (the line as is), 1000 lines per transaction, no validation.
// Usage: catalog-baseline.ts <file> <database>; prints "RESULT {...}".
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";

const [file, database] = process.argv.slice(2) as [string, string];
const db = new Database(database);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec("CREATE TABLE products (id TEXT PRIMARY KEY, doc TEXT NOT NULL)");
const insert = db.prepare("INSERT INTO products (id, doc) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET doc = excluded.doc");
const started = performance.now();
let lines = 0;
db.exec("BEGIN");
for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
  if (line === "") continue;
  const product = JSON.parse(line) as { id: string };
  insert.run(product.id, line);
  if (++lines % 1000 === 0) {
    db.exec("COMMIT");
    db.exec("BEGIN");
  }
}
db.exec("COMMIT");
const seconds = (performance.now() - started) / 1000;
db.close();
console.log(`RESULT ${JSON.stringify({ lines, seconds, productsPerSecond: Math.round(lines / seconds), maxRssBytes: process.resourceUsage().maxRSS * 1024 })}`);
