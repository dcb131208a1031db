// The kit the ESM hosts embed, built from the installed package's entry points: SQLite, the
// real scheduler, texts kept in memory (the hosts serve them at /texts), one company.
import { createReachkit, silentLogger } from "reachkit";
import { nodeScheduleScheduler } from "reachkit/adapters/scheduler/node-schedule";
import { memorySms } from "reachkit/adapters/sms/memory";
import { sqliteStorage } from "reachkit/adapters/storage/sqlite";
import { accountsPlugin } from "reachkit/plugins/accounts";
import { subscriptionsPlugin } from "reachkit/plugins/subscriptions";

export async function startHostKit(companyName) {
  const sms = memorySms();
  const kit = createReachkit({
    storage: sqliteStorage({ filename: `${companyName}.db` }),
    scheduler: nodeScheduleScheduler(),
    sms,
    logger: silentLogger(),
    secret: process.env.REACHKIT_SECRET,
    plugins: [accountsPlugin(), subscriptionsPlugin()],
  });
  await kit.start();
  const { output } = await kit.provisionCompany({ name: companyName });
  return { kit, apiKey: output.apiKey, texts: () => sms.sent.map((text) => text.body) };
}

export const ready = (port, apiKey) => console.log(`READY ${JSON.stringify({ port, apiKey })}`);
