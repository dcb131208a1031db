// An Express app in TypeScript, checked with tsc --strict against the installed package's declarations.
import express from "express";
import type { AddressInfo } from "node:net";
import { createReachkit, silentLogger, type Reachkit } from "reachkit";
import { expressRouter } from "reachkit/adapters/http/express";
import { nodeScheduleScheduler } from "reachkit/adapters/scheduler/node-schedule";
import { memorySms } from "reachkit/adapters/sms/memory";
import { sqliteStorage } from "reachkit/adapters/storage/sqlite";
import { accountsPlugin } from "reachkit/plugins/accounts";
import { subscriptionsPlugin } from "reachkit/plugins/subscriptions";

const secret = process.env.REACHKIT_SECRET;
if (secret === undefined) throw new Error("REACHKIT_SECRET is not set");
const sms = memorySms();
const kit: Reachkit = createReachkit({
  storage: sqliteStorage({ filename: "typescript-host.db" }),
  scheduler: nodeScheduleScheduler(),
  sms,
  logger: silentLogger(),
  secret,
  plugins: [accountsPlugin(), subscriptionsPlugin()],
});
await kit.start();
const { output } = await kit.provisionCompany({ name: "TypeScript Shop" });
// The plugin services are typed through the declarations, not `any`:
const eligibility: Promise<{ isEligible: boolean }> = kit.plugin("subscriptions").isEligible(String(output.companyId), { phone: "+19148440001" }, { type: "MARKETING", channel: "TEXT" });
void eligibility;
// @ts-expect-error: no plugin has this name (for tsc only: never called)
const noSuchPlugin = () => kit.plugin("no-such-plugin");
void noSuchPlugin;

const app = express();
app.use(expressRouter(kit, { prefix: "/reachkit" }));
app.get("/texts", (_request, response) => void response.json(sms.sent.map((text) => text.body)));
const server = app.listen(0, () => console.log(`READY ${JSON.stringify({ port: (server.address() as AddressInfo).port, apiKey: output.apiKey })}`));
process.once("SIGTERM", () => server.close(() => void kit.stop()));
