// A Fastify app in plain ESM that registers the installed reachkit under /reachkit.
import Fastify from "fastify";
import { createReachkit, silentLogger } from "reachkit";
import { fastifyPlugin } from "reachkit/adapters/http/fastify";
import { nodeScheduleScheduler } from "reachkit/adapters/scheduler/node-schedule";
import { memorySms } from "reachkit/adapters/sms/memory";
import { sqliteStorage } from "reachkit/adapters/storage/sqlite";
import { accountsPlugin } from "reachkit/plugins/accounts";
import { subscriptionsPlugin } from "reachkit/plugins/subscriptions";

const sms = memorySms();
const kit = createReachkit({
  storage: sqliteStorage({ filename: "fastify-host.db" }),
  scheduler: nodeScheduleScheduler(),
  sms,
  logger: silentLogger(),
  secret: process.env.REACHKIT_SECRET,
  plugins: [accountsPlugin(), subscriptionsPlugin()],
});
await kit.start();
const { output } = await kit.provisionCompany({ name: "Fastify Shop" });

const app = Fastify();
await app.register(fastifyPlugin(kit, { prefix: "/reachkit" }));
app.get("/texts", async () => sms.sent.map((text) => text.body));
await app.listen({ port: 0, host: "127.0.0.1" });
console.log(`READY ${JSON.stringify({ port: app.server.address().port, apiKey: output.apiKey })}`);
process.once("SIGTERM", () => app.close().then(() => kit.stop()));
