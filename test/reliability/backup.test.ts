import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { promisify } from "node:util";
import { backupCommand, restoreCommand } from "../../server/backup.ts";
import { runCli } from "../../src/index.ts";
import { openServerKit } from "../support/cli.ts";
import { CrashableServer, sleep } from "./support.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const run = promisify(execFile);

/** The `reachkit` command, as an operator runs it beside the server (a process of its own). */
async function reachkitBin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "server/cli.ts", ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The same commands in this process (a process start costs seconds on a busy machine). */
async function reachkit(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    commands: [backupCommand, restoreCommand],
    defaultDataDir: "./data",
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    openKit: () => Promise.reject(new Error("backup and restore never open the kit")),
  });
  return { code, stdout, stderr };
}

/** The appointment type names the data directory holds, read with the server down. */
async function typeNames(dataDir: string): Promise<Set<string>> {
  const kit = await openServerKit(dataDir);
  try {
    const companyId = (await kit.plugin("accounts").listCompanies())[0]!.id;
    return new Set((await kit.plugin("appointments").types.list(companyId)).map((type) => type.type));
  } finally {
    await kit.stop();
  }
}

it("reachkit backup copies the database while the server runs and writes; restore brings back exactly that, and is refused while a server runs", { timeout: 60_000 }, async () => {
  const server = new CrashableServer();
  try {
    await server.start();
    const createType = async (name: string) => {
      let answer = await server.request("POST", "/events/types", { type: name }, server.legacyToken);
      // As fast as the server goes: on a quiet machine that is past the token's rate limit, so wait for the next second.
      while (answer.status === 429) {
        await sleep(200);
        answer = await server.request("POST", "/events/types", { type: name }, server.legacyToken);
      }
      assert.equal(answer.status, 200, name);
    };
    for (let n = 0; n < 20; n++) await createType(`before-${n}`);

    // Writes go on during the backup; each is in the copy wholly or not at all.
    let writing = true;
    const during: string[] = [];
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        await createType(`during-${n}`);
        during.push(`during-${n}`);
      }
    })();
    const backupFile = join(temporaryDirectory("backup"), "reachkit-backup.db");
    const backup = await reachkitBin("backup", "--data-dir", server.dataDir, "--out", backupFile, "--json");
    writing = false;
    await writer;
    assert.equal(backup.code, 0, backup.stderr);
    assert.equal(JSON.parse(backup.stdout).backup, backupFile);
    assert.ok(during.length > 0, "the server took writes while the backup ran");
    const again = await reachkit("backup", "--data-dir", server.dataDir, "--out", backupFile);
    assert.equal(again.code, 2, "an existing file is not overwritten");
    assert.match(again.stderr, /exists already/);

    await createType("after-backup");
    const refused = await reachkit("restore", "--data-dir", server.dataDir, "--from", backupFile);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /a reachkit server \(pid \d+\) serves .*: stop it before restoring/);
    await server.stop();

    const notABackup = join(server.dataDir, "notes.txt");
    writeFileSync(notABackup, "not a database");
    const wrongFile = await reachkit("restore", "--data-dir", server.dataDir, "--from", notABackup);
    assert.equal(wrongFile.code, 2);
    assert.match(wrongFile.stderr, /not a readable SQLite database|cannot be opened/);

    const restored = await reachkit("restore", "--data-dir", server.dataDir, "--from", backupFile);
    assert.equal(restored.code, 0, restored.stderr);
    const names = await typeNames(server.dataDir);
    for (let n = 0; n < 20; n++) assert.ok(names.has(`before-${n}`), `before-${n} is back`);
    assert.equal(names.has("after-backup"), false, "what was written after the backup is gone");
    // The writes during the backup: a prefix of them, in order, none half-written.
    const kept = during.filter((name) => names.has(name));
    assert.deepEqual(kept, during.slice(0, kept.length));
    assert.equal(names.size, 20 + kept.length);

    // The server starts on the restored data, with the same credentials.
    await server.start();
    assert.equal((await server.request("GET", "/v1/me")).status, 200);
    await server.stop();
  } finally {
    await server.dispose();
  }
});
