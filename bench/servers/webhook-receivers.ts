// Three webhook receivers in one process of their own, for bench/webhooks.ts: each answers
// a POST with 200 at once, except the one named by SLOW_RECEIVER, which answers after
// SLOW_MS. GET /counts on the first port answers how many POSTs each has taken; with
// `?receiver=i&atLeast=n` it answers once receiver i has taken n (one request a wait, where
// polling charged the measured process a connection every few milliseconds).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import "./cpu-probe.ts";

const slow = Number(process.env.SLOW_RECEIVER ?? -1);
const slowMs = Number(process.env.SLOW_MS ?? 10_000);
const counts = [0, 0, 0];
/** Waits for `GET /counts?receiver=i&atLeast=n`, answered as the POSTs reach them. */
const waiting: Array<{ receiver: number; atLeast: number; answer: () => void }> = [];
const answerReached = () => {
  for (let index = waiting.length - 1; index >= 0; index--) {
    const wait = waiting[index]!;
    if (counts[wait.receiver]! >= wait.atLeast) {
      waiting.splice(index, 1);
      wait.answer();
    }
  }
};
const servers: Server[] = counts.map((_, index) =>
  createServer((request, response) => {
    if (request.method === "GET") {
      const query = new URL(request.url ?? "/", "http://receivers").searchParams;
      const answer = () => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
      if (!query.has("receiver")) return answer();
      waiting.push({ receiver: Number(query.get("receiver")), atLeast: Number(query.get("atLeast")), answer });
      return answerReached();
    }
    request.resume();
    request.on("end", () => {
      const answer = () => {
        counts[index]!++;
        if (waiting.length > 0) answerReached();
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
