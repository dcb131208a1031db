// The baseline of a short link's redirect: node:http and better-sqlite3 doing what reachkit does per click, by
// hand: the link by its code (the primary key), the click row inserted (same table, same indexes; each click its own
// commit, where reachkit shares one commit among the clicks of a turn), a 302.
import "./cpu-probe.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { indexedStatement, rowInserter } from "./baseline-sql.ts";

const db = new Database(join(process.env.BENCH_DATA_DIR!, "reachkit.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
const linkByCode = indexedStatement(db, "SELECT doc FROM campaigns_links WHERE id = ?").pluck();
const insertClick = rowInserter<{ id: string; companyId: string; linkId: string; at: number }>(db, "campaigns_clicks");
let clicks = 0;

const server = createServer((request, response) => {
  const match = /^\/l\/([A-Za-z0-9_-]{12})$/.exec(request.url ?? "");
  const doc = match ? (linkByCode.get(match[1]) as string | undefined) : undefined;
  if (!doc) {
    response.writeHead(404, { "content-type": "application/json" });
    response.end('{"error":"not found"}');
    return;
  }
  const link = JSON.parse(doc) as { id: string; companyId: string; url: string };
  insertClick({ id: `bare${Date.now()}${++clicks}`, companyId: link.companyId, linkId: link.id, at: Date.now() });
  response.writeHead(302, { location: link.url, "content-length": 0 });
  response.end();
});
server.listen(0, "127.0.0.1", () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
