// A CommonJS node:http app that loads the installed reachkit with require (Node 20.19 and later
// load ES modules with require; earlier Node 20 releases use `await import("reachkit")`). It builds its
// kit as host-kit.mjs does for the ESM hosts, but through require: loading every entry point that way is
// what it proves.
const { createServer } = require("node:http");
const { createReachkit, silentLogger } = require("reachkit");
const { nodeHandler } = require("reachkit/adapters/http/node");
const { nodeScheduleScheduler } = require("reachkit/adapters/scheduler/node-schedule");
const { memorySms } = require("reachkit/adapters/sms/memory");
const { sqliteStorage } = require("reachkit/adapters/storage/sqlite");
const { accountsPlugin } = require("reachkit/plugins/accounts");
const { subscriptionsPlugin } = require("reachkit/plugins/subscriptions");

async function main() {
  // require and import() give the same module, so tokens and classes are shared.
  if ((await import("reachkit")).createReachkit !== createReachkit) throw new Error("require and import() loaded two copies of reachkit");
  const sms = memorySms();
  const kit = createReachkit({
    storage: sqliteStorage({ filename: "commonjs-host.db" }),
    scheduler: nodeScheduleScheduler(),
    sms,
    logger: silentLogger(),
    secret: process.env.REACHKIT_SECRET,
    plugins: [accountsPlugin(), subscriptionsPlugin()],
  });
  await kit.start();
  const { output } = await kit.provisionCompany({ name: "CommonJS Shop" });
  const reachkit = nodeHandler(kit, { prefix: "/reachkit" });
  const server = createServer((request, response) =>
    reachkit(request, response, () => {
      response.writeHead(request.url === "/texts" ? 200 : 404, { "content-type": "application/json" });
      response.end(JSON.stringify(request.url === "/texts" ? sms.sent.map((text) => text.body) : { error: "not found" }));
    }),
  );
  server.listen(0, () => console.log(`READY ${JSON.stringify({ port: server.address().port, apiKey: output.apiKey })}`));
  process.once("SIGTERM", () => server.close(() => kit.stop()));
}
main();
