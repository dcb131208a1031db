// The baseline of bench/events.ts: bare node:http and better-sqlite3 doing the least a secure event endpoint
// does for POST /v1/events/ecommerce/product-view: the bearer token looked up by its hash (one indexed read),
// the body parsed as JSON, the same JSON inserted as one row, 200 with an empty body.
import "./cpu-probe.ts";
import { createHash, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { indexedStatement } from "./baseline-sql.ts";

const db = new Database(join(process.env.BENCH_DATA_DIR!, "bare-events.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`CREATE TABLE IF NOT EXISTS credentials (token_hash TEXT PRIMARY KEY, company_id TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, company_id TEXT NOT NULL, doc TEXT NOT NULL)`);
const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");
db.prepare("INSERT OR IGNORE INTO credentials VALUES (?, ?)").run(hashOf(process.env.BENCH_API_KEY!), "bench-company");
const companyOf = indexedStatement(db, "SELECT company_id FROM credentials WHERE token_hash = ?").pluck();
const insertEvent = db.prepare("INSERT INTO events (id, company_id, doc) VALUES (?, ?, ?)");

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
    const companyId = token === undefined ? undefined : (companyOf.get(hashOf(token)) as string | undefined);
    if (request.method !== "POST" || request.url !== "/v1/events/ecommerce/product-view" || companyId === undefined) {
      response.writeHead(companyId === undefined ? 401 : 404).end();
      return;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    try {
      JSON.parse(text);
    } catch {
      response.writeHead(400).end();
      return;
    }
    insertEvent.run(randomUUID(), companyId, text);
    response.writeHead(200).end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(`PORT ${(server.address() as { port: number }).port}`));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
