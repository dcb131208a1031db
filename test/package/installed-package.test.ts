import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
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

const repository = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
/** The hosts' own packages, in the ranges the repository uses, so npm's cache from its install serves them. */
const HOST_PACKAGES = ["express", "fastify", "typescript", "@types/node", "@types/express"].map((name) => `${name}@${repository.devDependencies[name]}`);

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
  stop(): Promise<void>;
}

const running: Host[] = [];
after(async () => {
  await Promise.all(running.map((host) => host.stop()));
});

/** Runs a host file of the app folder with plain node, until it prints its port and API key. */
async function startHost(file: string): Promise<Host> {
  const child = spawn(process.execPath, [file], { cwd: app, env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const ready = await new Promise<{ port: number; apiKey: string }>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`${file} exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("READY ")) resolve(JSON.parse(line.slice("READY ".length)));
    });
  });
  const host = {
    ...ready,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
  running.push(host);
  return host;
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
    await run(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: app }).catch((error: { stdout: string }) => {
      assert.fail(`tsc --strict failed:\n${error.stdout}`);
    });
    await assertServesReachkit(await startHost("built/typescript-host.js"), "TypeScript Shop");
  });

  it("runs the reachkit bin from the install", async () => {
    const dataDir = temporaryDirectory("package-bin");
    const { stdout } = await run(join(app, "node_modules/.bin/reachkit"), ["init", "--company", "Bin Shop", "--json", "--data-dir", dataDir], { cwd: app, env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET } });
    assert.equal((JSON.parse(stdout) as Json).companyName, "Bin Shop");
  });
});
