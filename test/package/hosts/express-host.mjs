// An Express app in plain ESM that embeds the installed reachkit under /reachkit.
import express from "express";
import { createReachkit, silentLogger } from "reachkit";
import { expressRouter } from "reachkit/adapters/http/express";
import { nodeScheduleScheduler } from "reachkit/adapters/scheduler/node-schedule";
import { memorySms } from "reachkit/adapters/sms/memory";
import { sqliteStorage } from "reachkit/adapters/storage/sqlite";
import { accountsPlugin } from "reachkit/plugins/accounts";
import { subscriptionsPlugin } from "reachkit/plugins/subscriptions";

const sms = memorySms();
const kit = createReachkit({
  storage: sqliteStorage({ filename: "express-host.db" }),
  scheduler: nodeScheduleScheduler(),
  sms,
  logger: silentLogger(),
  secret: process.env.REACHKIT_SECRET,
  plugins: [accountsPlugin(), subscriptionsPlugin()],
});
await kit.start();
const { output } = await kit.provisionCompany({ name: "Express Shop" });

const app = express();
app.use(expressRouter(kit, { prefix: "/reachkit" }));
app.get("/texts", (request, response) => response.json(sms.sent.map((text) => text.body)));
const server = app.listen(0, () => console.log(`READY ${JSON.stringify({ port: server.address().port, apiKey: output.apiKey })}`));
process.once("SIGTERM", () => server.close(() => kit.stop()));
