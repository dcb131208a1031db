// The OAuth consent page (a signed-in GET of the install URL) through the node:http adapter,
// beside a bare node:http + better-sqlite3 server doing the same lookups and rendering, in the
// same run. Usage: npm run bench:oauth-install [-- seconds]
import { join } from "node:path";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { alternate, load, report, startServerProcess, stopServerProcess } from "./support.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const seconds = Number(process.argv[2] ?? 10);
const connections = 32;
const dataDir = temporaryDirectory("bench-oauth");
const secret = "bench-secret-bench-secret-bench-secret-0";
const redirectUri = "https://shop-app.example.com/oauth/callback";

const setup = createServerKit({ dataDir, publicUrl: "http://localhost", secret, logger: silentLogger() });
await setup.start({ runJobs: false });
const { company } = await setup.provisionCompany({ name: "Bench Co" });
const oauth = setup.plugin("oauth");
const { application } = await oauth.applications.create({ companyId: company.id, name: "Bench App", redirectUris: [redirectUri], scopes: ["subscriptions:read"] });
await oauth.users.create({ companyId: company.id, email: "bench@example.com", password: "bench password" });
const path = `/integrations/oauth-install?${new URLSearchParams({ client_id: application.clientId, redirect_uri: redirectUri, state: "bench" })}`;
const cookieOf = (header: string | undefined) => header!.split(";", 1)[0]!;
const loginPage = await setup.inject({ url: path });
const csrfCookie = cookieOf(loginPage.headers["set-cookie"]);
const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(loginPage.body)![1]!;
const signedIn = await setup.inject({
  method: "POST",
  url: "/integrations/oauth-install/login",
  headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie },
  body: new URLSearchParams({ csrf_token: csrfToken, client_id: application.clientId, redirect_uri: redirectUri, email: "bench@example.com", password: "bench password" }).toString(),
});
const headers = { cookie: `${csrfCookie}; ${cookieOf(signedIn.headers["set-cookie"])}` };
const check = await setup.inject({ url: path, headers });
if (!check.body.includes("Install Bench App for Bench Co?")) throw new Error("the benchmark setup did not reach the consent page");
await setup.stop();

const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret };
const servers = { bare: join(import.meta.dirname, "servers/bare-install-page.ts"), reachkit: join(import.meta.dirname, "servers/reachkit-install-page.ts") };
const result = await alternate(servers, async (script) => {
  const { port, child } = await startServerProcess(script, env);
  const url = `http://127.0.0.1:${port}${path}`;
  await load({ url, headers, seconds: 2, connections }); // warm-up
  const measured = await load({ url, headers, seconds, connections });
  await stopServerProcess(child);
  return measured;
});
report("oauth-install", { request: "GET /integrations/oauth-install (signed in: the consent page)", seconds, connections, ...result });
