// Three webhook receivers in one process of their own, for bench/webhooks.ts: each answers
// a POST with 200 at once, except the one named by SLOW_RECEIVER, which answers after
// SLOW_MS. GET /counts on the first port answers how many POSTs each has taken.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import "./cpu-probe.ts";

const slow = Number(process.env.SLOW_RECEIVER ?? -1);
const slowMs = Number(process.env.SLOW_MS ?? 10_000);
const counts = [0, 0, 0];
const servers: Server[] = counts.map((_, index) =>
  createServer((request, response) => {
    if (request.method === "GET") return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    request.resume();
    request.on("end", () => {
      const answer = () => {
        counts[index]!++;
        response.writeHead(200, { "content-type": "application/json" }).end('{"status":"success"}');
      };
      if (index === slow) setTimeout(answer, slowMs);
      else answer();
    });
  }),
);
// Longer than any pause of the bench between requests: a kept-alive connection the server closes as a client reuses it fails that request.
for (const server of servers) server.keepAliveTimeout = 120_000;
await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))));
console.log(`PORTS ${servers.map((server) => (server.address() as AddressInfo).port).join(" ")}`);
console.log(`PORT ${(servers[0]!.address() as AddressInfo).port}`);
