// A host app with the feedback plugin: SQLite in ./feedback.db, texts printed, reachkit on node:http.
import { ACCOUNTS, createReachkit, silentLogger } from "reachkit";
import { nodeHttpServer } from "reachkit/adapters/http/node";
import { nodeScheduleScheduler } from "reachkit/adapters/scheduler/node-schedule";
import { consoleSms } from "reachkit/adapters/sms/console";
import { sqliteStorage } from "reachkit/adapters/storage/sqlite";
import { accountsPlugin } from "reachkit/plugins/accounts";
import { feedbackPlugin } from "../src/index.js";

const secret = process.env.REACHKIT_SECRET;
if (secret === undefined) throw new Error("set REACHKIT_SECRET (32 characters or more)");

const kit = createReachkit({
  storage: sqliteStorage({ filename: "feedback.db" }),
  scheduler: nodeScheduleScheduler(),
  sms: consoleSms(),
  logger: silentLogger(),
  secret,
  plugins: [accountsPlugin(), feedbackPlugin({ thankYouText: "Thanks for telling us how it went!" })],
});
kit.events.on("feedback.thanked", (event) => console.log(`feedback.thanked ${JSON.stringify(event)}`));
await kit.start();

if ((await kit.container.resolve(ACCOUNTS).listCompanies()).length === 0) {
  const { output } = await kit.provisionCompany({ name: "Feedback Shop" });
  console.log(`apiKey: ${String(output.apiKey)}`);
}
const http = nodeHttpServer(kit);
const { port } = await http.listen(Number(process.env.PORT ?? 3004));
console.log(`listening on http://localhost:${port}`);

process.once("SIGTERM", () => http.server.close(() => void kit.stop()));
