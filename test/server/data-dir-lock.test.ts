import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { backupCommand, restoreCommand } from "../../server/backup.ts";
import { configFromEnv } from "../../server/config.ts";
import { DataDirInUseError, lockDataDir, serverPidFile } from "../../server/data-dir-lock.ts";
import { startServer } from "../../server/server.ts";
import { runCli } from "../../src/index.ts";
import { startExampleProcess } from "../support/example-process.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { TEST_SECRET } from "../support/test-kit.ts";
import { waitUntil } from "../support/wait.ts";

const SERVER_ENTRY = "server/main.ts";
const DIED_WARNING = "the previous server of this data directory did not stop cleanly; recovering its work";
const serverEnv = (dataDir: string) => ({ REACHKIT_DATA_DIR: dataDir, REACHKIT_SECRET: TEST_SECRET });

/** A live process that is not reachkit (what a stale pid often names after a reboot). */
function otherProcess(): ChildProcess {
  return spawn("sleep", ["600"], { stdio: "ignore" });
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/** How a server process started: listening, or refused and exited. */
type Outcome = { listening: true; child: ChildProcess; logs: Array<Record<string, unknown>> } | { listening: false; code: number | null; stderr: string };

/** Runs `npm start`'s entry point and resolves when it listens or exits. */
function serverProcess(dataDir: string): Promise<Outcome> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER_ENTRY], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...serverEnv(dataDir) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const logs: Array<Record<string, unknown>> = [];
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve({ listening: false, code, stderr }));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === "listening") resolve({ listening: true, child, logs });
    });
  });
}

/** `reachkit backup` and `restore` in this process. */
async function reachkit(...args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await runCli(args, {
    commands: [backupCommand, restoreCommand],
    defaultDataDir: "./data",
    stdout: () => undefined,
    stderr: (text) => void (stderr += text),
    openKit: () => Promise.reject(new Error("backup and restore never open the kit")),
  });
  return { code, stderr };
}

describe("the data directory lock (server.lock, server.pid)", () => {
  it("takes over a pid file naming a live process that is not reachkit, and refuses a second holder while it runs", async () => {
    const dataDir = temporaryDirectory("lock");
    const sleeper = otherProcess();
    try {
      writeFileSync(serverPidFile(dataDir), String(sleeper.pid));
      const server = await startServer(configFromEnv({ ...serverEnv(dataDir), LOG_LEVEL: "error" }, { port: 0, dataDir }), () => undefined);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      assert.equal(readFileSync(serverPidFile(dataDir), "utf8"), String(process.pid));
      assert.throws(
        () => lockDataDir(dataDir),
        (error: unknown) => error instanceof DataDirInUseError && error.pid === process.pid && /another reachkit server \(pid \d+\) serves .*; stop it first/.test(error.message),
      );
      await server.close();
      assert.equal(existsSync(serverPidFile(dataDir)), false, "a graceful stop removes the pid file");
      const next = lockDataDir(dataDir);
      assert.equal(next.previousServerDied, false, "after a graceful stop nothing is recovered");
      next.release();
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("takes over from a killed server whose zombie still has its pid, with the did-not-stop-cleanly warning", { timeout: 120_000 }, async () => {
    const dataDir = temporaryDirectory("lock");
    // The shell becomes `sleep`, the server's parent, which never reaps it: killed, the server stays a zombie with its pid.
    const parent = spawn("sh", ["-c", `"$0" --import tsx ${SERVER_ENTRY} & exec sleep 600`, process.execPath], {
      env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...serverEnv(dataDir) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let second: Awaited<ReturnType<typeof startExampleProcess>> | undefined;
    let first: number | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        parent.once("exit", () => reject(new Error("the first server exited")));
        createInterface({ input: parent.stdout! }).on("line", (line) => line.includes('"msg":"listening"') && resolve());
      });
      const killed = (first = Number(readFileSync(serverPidFile(dataDir), "utf8")));
      process.kill(killed, "SIGKILL");
      await waitUntil("the killed server to be a zombie", () => readFileSync(`/proc/${killed}/stat`, "utf8").split(" ")[2] === "Z");
      second = await startExampleProcess(SERVER_ENTRY, serverEnv(dataDir));
      assert.ok(second.logs.some((entry) => entry.msg === DIED_WARNING && entry.level === "warn"));
      assert.equal(readFileSync(serverPidFile(dataDir), "utf8"), String(second.child.pid));
    } finally {
      await second?.crash();
      if (first !== undefined) killQuietly(first); // a zombie already, or a server a failed step left running
      parent.kill("SIGKILL");
    }
  });

  it("two servers started at once over a stale pid file: exactly one serves, the other refuses clearly", { timeout: 120_000 }, async () => {
    const dataDir = temporaryDirectory("lock");
    const sleeper = otherProcess();
    const outcomes: Outcome[] = [];
    try {
      writeFileSync(serverPidFile(dataDir), String(sleeper.pid));
      outcomes.push(...(await Promise.all([serverProcess(dataDir), serverProcess(dataDir)])));
      const serving = outcomes.filter((outcome) => outcome.listening);
      const refused = outcomes.filter((outcome) => !outcome.listening);
      assert.equal(serving.length, 1, JSON.stringify(refused));
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.code, 1);
      assert.match(refused[0]!.stderr, /^reachkit: another reachkit server \(pid \d+\) serves .*; stop it first\n$/);
      assert.ok(serving[0]!.logs.some((entry) => entry.msg === DIED_WARNING));
    } finally {
      for (const outcome of outcomes) if (outcome.listening) outcome.child.kill("SIGKILL");
      sleeper.kill("SIGKILL");
    }
  });

  it("restore is refused while a server holds the directory, and runs over a stale pid file", async () => {
    const dataDir = temporaryDirectory("lock");
    const backupFile = join(temporaryDirectory("lock-backup"), "backup.db");
    const sleeper = otherProcess();
    try {
      const server = await startServer(configFromEnv({ ...serverEnv(dataDir), LOG_LEVEL: "error" }, { port: 0, dataDir }), () => undefined);
      assert.equal((await reachkit("backup", "--data-dir", dataDir, "--out", backupFile)).code, 0);
      const refused = await reachkit("restore", "--data-dir", dataDir, "--from", backupFile);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /a reachkit server \(pid \d+\) serves .*: stop it before restoring/);
      await server.close();

      writeFileSync(serverPidFile(dataDir), String(sleeper.pid));
      const restored = await reachkit("restore", "--data-dir", dataDir, "--from", backupFile);
      assert.equal(restored.code, 0, restored.stderr);
    } finally {
      sleeper.kill("SIGKILL");
    }
  });
});
