import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { waitUntil } from "../support/wait.ts";

// reachkit as a user meets it: `npm pack`, the tarball installed into a fresh folder beside
// express and fastify, and four hosts that never see tsx or a TypeScript source.

const root = join(import.meta.dirname, "../..");
const hostSources = join(import.meta.dirname, "hosts");
const run = promisify(execFile);
const npm = (args: string[], cwd: string) => run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd, maxBuffer: 16 * 1024 * 1024 });

const repository = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const ranges = { ...repository.dependencies, ...repository.devDependencies };
/** The hosts' own packages (valibot for the example plugin's schemas), in the ranges the repository uses, so npm's cache from its install serves them. */
const HOST_PACKAGES = ["express", "fastify", "typescript", "@types/node", "@types/express", "valibot"].map((name) => `${name}@${ranges[name]}`);

let app: string;
/** What `npm pack --json` says of the tarball. */
let packed: { filename: string; files: { path: string }[] };

before(async () => {
  const tarballs = temporaryDirectory("package-tarball");
  // `npm pack` runs `prepare`, which builds dist/ from the sources.
  const { stdout } = await npm(["pack", "--json", "--pack-destination", tarballs], root);
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  app = temporaryDirectory("package-app");
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "host-app", private: true, type: "module" }));
  // Install scripts are skipped only to spare better-sqlite3's 40-second compile: the repository's
  // own build of the same version is copied in (rebuilt when the versions differ).
  await npm(["install", "--ignore-scripts", join(tarballs, packed.filename), ...HOST_PACKAGES], app);
  const version = (folder: string) => (JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { version: string }).version;
  const ours = join(root, "node_modules/better-sqlite3");
  const theirs = join(app, "node_modules/better-sqlite3");
  if (version(ours) === version(theirs)) cpSync(join(ours, "build"), join(theirs, "build"), { recursive: true });
  else await npm(["rebuild", "better-sqlite3"], app);
  cpSync(hostSources, app, { recursive: true });
});

interface Host {
  port: number;
  apiKey: string;
  /** Every line it printed so far. */
  lines: string[];
  stop(): Promise<void>;
}

const running: Host[] = [];
after(async () => {
  await Promise.all(running.map((host) => host.stop()));
});

/** The test hosts print `READY {"port":...,"apiKey":"..."}` once they listen. */
const readyLine = (lines: string[]) => {
  const line = lines.find((printed) => printed.startsWith("READY "));
  return line === undefined ? undefined : (JSON.parse(line.slice("READY ".length)) as { port: number; apiKey: string });
};

/** Runs a host file of the app folder with plain node, until what it printed gives its port and API key. */
async function startHost(file: string, ready = readyLine): Promise<Host> {
  const child = spawn(process.execPath, [file], { cwd: app, env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const lines: string[] = [];
  const listening = await new Promise<{ port: number; apiKey: string }>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`${file} exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      const found = ready(lines);
      if (found) resolve(found);
    });
  });
  const host = {
    ...listening,
    lines,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
  running.push(host);
  return host;
}

/** Runs the installed tsc on a project of the app folder; its errors fail the test. */
async function compile(project: string): Promise<void> {
  await run(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", project], { cwd: app }).catch((error: { stdout: string }) => {
    assert.fail(`tsc -p ${project} failed:\n${error.stdout}`);
  });
}

/** `GET /v1/me` and an opt-in through the host's mount, then the "Reply Y" text the opt-in's job sends. */
async function assertServesReachkit(host: Host, companyName: string): Promise<void> {
  const base = `http://127.0.0.1:${host.port}`;
  const headers = { authorization: `Bearer ${host.apiKey}`, "content-type": "application/json" };
  const me = await fetch(`${base}/reachkit/v1/me`, { headers });
  assert.equal(me.status, 200);
  assert.equal(((await me.json()) as Json).companyName, companyName);

  const optIn = await fetch(`${base}/reachkit/v1/subscriptions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ user: { phone: "+19148440001" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" }),
  });
  const accepted = (await optIn.json()) as Json;
  assert.equal(optIn.status, 202, JSON.stringify(accepted));
  assert.equal(accepted.user.phone, "+19148440001");

  // The durable job runs on the real scheduler: its text comes a moment later.
  await waitUntil('the "Reply Y" text', async () => ((await (await fetch(`${base}/texts`)).json()) as string[]).some((text) => text.includes("Reply Y")));
}

describe("the installed package", () => {
  it("ships the built JavaScript, its declarations and the checkpoint worker, and no TypeScript source", () => {
    const paths = packed.files.map((file) => file.path);
    assert.ok(paths.includes("dist/src/index.js") && paths.includes("dist/src/index.d.ts"), paths.join("\n"));
    assert.ok(paths.includes("dist/adapters/storage/sqlite/checkpoint-worker.mjs"));
    assert.ok(paths.includes("dist/server/cli.js"));
    assert.deepEqual(paths.filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts")), []);
    assert.deepEqual(paths.filter((path) => !path.startsWith("dist/")).sort(), ["README.md", "package.json"]);
    assert.equal(existsSync(join(app, "node_modules/tsx")), false, "tsx is not installed with reachkit");
  });

  it("serves a plain ESM Express host", async () => {
    await assertServesReachkit(await startHost("express-host.mjs"), "Express Shop");
  });

  it("serves a CommonJS host that loads reachkit with require", async () => {
    await assertServesReachkit(await startHost("commonjs-host.cjs"), "CommonJS Shop");
  });

  it("serves a Fastify host", async () => {
    await assertServesReachkit(await startHost("fastify-host.mjs"), "Fastify Shop");
  });

  it("type-checks a TypeScript host with tsc --strict against the shipped declarations, and serves it compiled", async () => {
    const tsconfig = {
      compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", types: ["node"], outDir: "built", skipLibCheck: false },
      files: ["typescript-host.ts"],
    };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    await compile("tsconfig.json");
    await assertServesReachkit(await startHost("built/typescript-host.js"), "TypeScript Shop");
  });

  it("runs the reachkit bin from the install", async () => {
    const dataDir = temporaryDirectory("package-bin");
    const { stdout } = await run(join(app, "node_modules/.bin/reachkit"), ["init", "--company", "Bin Shop", "--json", "--data-dir", dataDir], { cwd: app, env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET } });
    assert.equal((JSON.parse(stdout) as Json).companyName, "Bin Shop");
  });
});

describe("the example plugin of docs/writing-a-plugin.md, built against the installed package", () => {
  it("compiles with tsc --strict; in its demo host the route stores the feedback, the job texts thanks and marks it, the event is emitted", async () => {
    const plugin = join(app, "plugin-feedback");
    cpSync(join(root, "examples/plugin-feedback"), plugin, { recursive: true, filter: (path) => !/[/\\](dist|node_modules)$/.test(path) });
    await compile("plugin-feedback/tsconfig.json");
    const host = await startHost("plugin-feedback/dist/demo/host.js", (lines) => {
      const apiKey = lines.map((line) => /^apiKey: (\S+)$/.exec(line)?.[1]).find(Boolean);
      const port = lines.map((line) => /^listening on http:\/\/localhost:(\d+)$/.exec(line)?.[1]).find(Boolean);
      return apiKey && port ? { apiKey, port: Number(port) } : undefined;
    });
    const base = `http://127.0.0.1:${host.port}`;
    const headers = { authorization: `Bearer ${host.apiKey}`, "content-type": "application/json" };
    const leave = (body: object) => fetch(`${base}/v1/feedback`, { method: "POST", headers, body: JSON.stringify(body) });

    const refused = await leave({ phone: "+19148440001", rating: 7 });
    assert.equal(refused.status, 400);
    assert.deepEqual(((await refused.json()) as Json).error.details.map((detail: { path: string }) => detail.path), ["rating"]);

    const accepted = await leave({ phone: "+19148440001", rating: 5, comment: "Great cut" });
    assert.equal(accepted.status, 202);
    const received = (await accepted.json()) as Json;
    assert.equal(received.status, "received");

    const event = () => host.lines.find((line) => line.startsWith("feedback.thanked "));
    await waitUntil("the feedback.thanked event", () => event() !== undefined);
    const companyId = (((await (await fetch(`${base}/v1/me`, { headers })).json()) as Json).companyId) as string;
    assert.deepEqual(JSON.parse(event()!.slice("feedback.thanked ".length)), { companyId, feedbackId: received.id, rating: 5 });
    // The outbox sends the text in a job of its own, queued by the thank-you job.
    const texts = () => host.lines.filter((line) => line.startsWith('{"sms"')).map((line) => (JSON.parse(line) as Json).sms);
    await waitUntil("the thank-you text", () => texts().length > 0);
    assert.deepEqual(texts().map((text: Json) => [text.to, text.body]), [["+19148440001", "Thanks for telling us how it went!"]]);

    const fetched = (await (await fetch(`${base}/v1/feedback/${received.id}`, { headers })).json()) as Json;
    assert.equal(fetched.status, "thanked");
    const database = new Database(join(app, "feedback.db"), { readonly: true });
    const rows = database.prepare("SELECT doc FROM feedback_entries").all() as { doc: string }[];
    database.close();
    assert.deepEqual(
      rows.map((row) => JSON.parse(row.doc) as Json).map(({ id, phone, rating, comment, status }) => ({ id, phone, rating, comment, status })),
      [{ id: received.id, phone: "+19148440001", rating: 5, comment: "Great cut", status: "thanked" }],
    );
  });
});
