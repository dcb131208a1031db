import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { configFromEnv } from "../../server/config.ts";
import { startServer } from "../../server/server.ts";
import { startExampleProcess } from "../support/example-process.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { waitUntil } from "../support/wait.ts";

const newDataDir = () => temporaryDirectory("operations");

/** `npm start`'s entry point until it exits: what it printed and its exit code. */
function startToExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], { env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

const catalogLine = (id: string) =>
  JSON.stringify({
    id,
    name: `Product ${id}`,
    link: `https://shop.example.com/${id}`,
    lastUpdated: "2026-02-01T10:00:00Z",
    variants: [{ id: `${id}-m`, name: "M", link: `https://shop.example.com/${id}`, prices: [{ currencyCode: "USD", amount: "20" }], availableForPurchase: true, lastUpdated: "2026-02-01T10:00:00Z" }],
  });

describe("operating the self-hosted server", () => {
  it("says in one line, with an exit code, why it cannot start, and a first start that cannot listen creates nothing", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as { port: number }).port;
    const dataDir = newDataDir();
    try {
      const portInUse = await startToExit({ PORT: String(port), REACHKIT_DATA_DIR: dataDir });
      assert.equal(portInUse.code, 1);
      assert.equal(portInUse.stderr, `reachkit: could not start: port ${port} is in use by another process; stop it, or set PORT to a free port\n`);
      assert.doesNotMatch(portInUse.stdout, /apiKey/, "no credentials were printed");
      assert.equal(existsSync(join(dataDir, "reachkit.db")), false, "no database, no company");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }

    const badSetting = await startToExit({ PORT: "0", LOG_LEVEL: "loud", REACHKIT_DATA_DIR: dataDir });
    assert.equal(badSetting.code, 2);
    assert.equal(badSetting.stderr, `reachkit: bad configuration: LOG_LEVEL must be debug, info, warn or error, got "loud"\n`);

    // The port free again, the next start is the first: it creates the company and prints its credentials.
    let printed = "";
    const running = await startServer(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir }), (text) => void (printed += text));
    try {
      assert.match(printed, /first start, created a company/);
      const held = await startToExit({ PORT: "0", REACHKIT_DATA_DIR: dataDir });
      assert.equal(held.code, 1);
      assert.match(held.stderr, /^reachkit: could not start: [^\n]*another reachkit server[^\n]*\n$/);
    } finally {
      await running.close();
    }
  });

  it("serves /readyz beside /healthz: ready while its kit serves, 503 once the kit stopped", async () => {
    const server = await startServer(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir: newDataDir() }), () => undefined);
    try {
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: "ready" });
      await server.kit.stop();
      const stopped = await fetch(`${server.url}/readyz`);
      assert.equal(stopped.status, 503);
      assert.deepEqual(await stopped.json(), { status: "stopped" });
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, "the process still answers");
    } finally {
      await server.close();
    }
  });

  it("answers GET / with a page linking the console, the API reference and the install page", async () => {
    const server = await startServer(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir: newDataDir() }), () => undefined);
    try {
      const home = await fetch(`${server.url}/`);
      assert.equal(home.status, 200);
      assert.equal(home.headers.get("content-type"), "text/html; charset=utf-8");
      const page = await home.text();
      assert.match(page, /<a href="docs">API reference<\/a> \(<a href="openapi.json">OpenAPI document<\/a>\)/);
      for (const link of ["docs", "openapi.json"]) assert.equal((await fetch(new URL(link, `${server.url}/`))).status, 200, link);
      assert.match(page, /<a href="console">Operator console<\/a>/);
      const consolePage = await fetch(new URL("console", `${server.url}/`));
      assert.equal(new URL(consolePage.url).pathname, "/console/sign-in", "the link reaches the console's sign-in");
      assert.match(await consolePage.text(), /Sign in to the reachkit console/);
      const install = /<a href="(integrations\/oauth-install)">Install page<\/a>/.exec(page);
      assert.ok(install, page);
      const installPage = await fetch(new URL(install[1]!, `${server.url}/`));
      assert.match(installPage.headers.get("content-type") ?? "", /^text\/html/, "the link reaches the install page");
      assert.equal((await fetch(`${server.url}/?utm=1`, { method: "HEAD" })).status, 200);
    } finally {
      await server.close();
    }
  });

  it("logs each job's outcome at info, a catalog upload with its lines, products saved, errors and seconds, and counts it all in /metrics", async () => {
    const server = await startExampleProcess("server/main.ts", { REACHKIT_DATA_DIR: newDataDir(), REACHKIT_SECRET: TEST_SECRET });
    const base = `http://127.0.0.1:${server.port}`;
    const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" };
    try {
      assert.equal((await fetch(`${base}/v1/me`, { headers })).status, 200);
      const optIn = await fetch(`${base}/v1/subscriptions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ user: { phone: "+19148440001" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" }),
      });
      assert.equal(optIn.status, 202);
      const upload = (await (await fetch(`${base}/v1/product-catalog/uploads`, { method: "POST", headers, body: "{}" })).json()) as Json;
      const { pathname, search } = new URL(upload.uploadUrl);
      const file = [catalogLine("tee"), catalogLine("mug"), '{"id":"broken"'].join("\n");
      assert.equal((await fetch(`${base}${pathname}${search}`, { method: "PUT", body: file })).status, 200);

      const jobDone = (type: string) => server.logs.find((line) => line.msg === "job done" && line.jobType === type);
      await waitUntil("the upload's job and the opt-in's text", () => ["catalog.upload.process", "subscriptions.opt-in", "reachkit.outbox.drain"].every((type) => jobDone(type)));
      const uploadLog = jobDone("catalog.upload.process")!;
      assert.equal(uploadLog.level, "info");
      assert.deepEqual(
        { uploadId: uploadLog.uploadId, status: uploadLog.status, lines: uploadLog.lines, productsSaved: uploadLog.productsSaved, errors: uploadLog.errors },
        { uploadId: upload.uploadId, status: "completed", lines: 3, productsSaved: 2, errors: 1 },
      );
      assert.equal(typeof uploadLog.seconds, "number");
      assert.equal(jobDone("reachkit.outbox.drain")!.sent, 1);
      assert.equal(jobDone("subscriptions.opt-in")!.level, "info");

      const metrics = await fetch(`${base}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(metrics.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      const text = await metrics.text();
      for (const line of [
        'reachkit_http_request_duration_seconds_count{method="GET",route="/v1/me",status="200"} 1',
        'reachkit_http_request_duration_seconds_count{method="POST",route="/v1/subscriptions",status="202"} 1',
        'reachkit_http_request_duration_seconds_count{method="PUT",route="/uploads/:key",status="200"} 1',
        'reachkit_messages_total{status="queued"} 1',
        'reachkit_messages_total{status="sent"} 1',
        "reachkit_catalog_lines_processed_total 3",
        'reachkit_jobs{state="due"} 0',
        'reachkit_jobs{state="dead"} 0',
        "reachkit_jobs_oldest_due_age_seconds 0",
      ]) {
        assert.ok(text.split("\n").includes(line), `${line}\n---\n${text}`);
      }
      assert.match(text, /^reachkit_jobs\{state="queued"\} \d+$/m);
      assert.match(text, /^process_resident_memory_bytes \d+$/m, "the server's process metrics");
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
