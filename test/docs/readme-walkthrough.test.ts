import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { startExampleProcess, type ExampleProcess } from "../support/example-process.ts";
import { freePort } from "../support/free-port.ts";
import { TEST_SECRET } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { JOBS_IDLE, matchesShown, shownOutput, walkthroughCommands } from "./shell-walkthrough.ts";

// The README's curl walkthrough, run as a reader runs it: every command in order, in bash, against
// a real server on a fresh data directory, each output compared with the one the README shows.

const root = join(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
/** Every section of the walkthrough; the OAuth one needs a person signing in with a browser (test/plugins/oauth has that). */
const walkthrough = walkthroughCommands(readme, { from: "curl walkthrough", to: "The `reachkit` command", skip: [] });
const ranWithoutBrowser = walkthroughCommands(readme, { from: "curl walkthrough", to: "The `reachkit` command", skip: ["Public applications (OAuth 2.0)"] });

/** Commands in the README run in a shell where `npx reachkit` is this repository's CLI, from its sources. */
const PRELUDE = String.raw`set -euo pipefail
npx() { if [ "$1" = reachkit ]; then shift; node --import "$REACHKIT_ROOT/node_modules/tsx/dist/loader.mjs" "$REACHKIT_ROOT/server/cli.ts" "$@"; else command npx "$@"; fi; }
${JOBS_IDLE}`;
const MARK = "\u001e";
/** Where the README's local webhook receiver listens; the test moves it to a free port, so two runs on one machine never meet. */
const RECEIVER = { host: "127.0.0.1", port: 8765 };

/** A README command on the test's ports: the server's and the webhook receiver's. */
function onPorts(command: string, serverPort: number, receiverPort: number): string {
  return command
    .replaceAll("localhost:3000", `localhost:${serverPort}`)
    .replaceAll(`${RECEIVER.host}:${RECEIVER.port}`, `${RECEIVER.host}:${receiverPort}`)
    .replaceAll(`listen(${RECEIVER.port}, "${RECEIVER.host}")`, `listen(${receiverPort}, "${RECEIVER.host}")`);
}

describe("the README walkthrough", () => {
  let server: ExampleProcess;
  let folder: string;
  let outputs: string[];
  let stderr: string;
  let receiverPort: number;

  before(async () => {
    folder = temporaryDirectory("readme");
    const port = await freePort();
    receiverPort = await freePort();
    const env = { PORT: String(port), REACHKIT_DATA_DIR: join(folder, "data"), REACHKIT_SECRET: TEST_SECRET, REACHKIT_SMS_LOG: join(folder, "texts.jsonl"), REACHKIT_WEBHOOKS_ALLOW_PRIVATE: "true" };
    server = await startExampleProcess(join(root, "server/main.ts"), env);
    const steps = ranWithoutBrowser.map((step, index) => `jobs_idle\nprintf '\\n${MARK}%d\\n' ${index}\n${onPorts(step.command, port, receiverPort)}\n`);
    const script = join(folder, "walkthrough.sh");
    writeFileSync(script, `${PRELUDE}${steps.join("")}jobs_idle\n`);
    const result = await promisify(execFile)("bash", [script], { cwd: folder, env: { ...process.env, ...env, REACHKIT_ROOT: root, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") }, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout: string; stderr: string; code: number }) => assert.fail(`the walkthrough stopped (exit ${error.code}):\n${error.stderr}\nafter:\n${error.stdout.slice(-3000)}`),
    );
    outputs = result.stdout.split(new RegExp(`\\n${MARK}\\d+\\n`)).slice(1);
    stderr = result.stderr;
  });

  after(async () => {
    await server?.stop();
  });

  it("runs every command in bash with set -u: each variable is set by an earlier command", () => {
    assert.equal(outputs.length, ranWithoutBrowser.length);
    assert.equal(stderr, "");
  });

  it("prints what the README shows under each command", () => {
    const wrong = ranWithoutBrowser.flatMap((step, index) => {
      const shown = shownOutput(step.shown);
      const output = outputs[index]!;
      return shown === undefined || matchesShown(shown.replaceAll("localhost:3000", "localhost:*"), output.replace(/localhost:\d+/g, "localhost:*").replaceAll(`${RECEIVER.host}:${receiverPort}`, `${RECEIVER.host}:${RECEIVER.port}`))
        ? []
        : [`[${step.section}] ${step.command}\n  shown:   ${shown}\n  printed: ${output.trim()}`];
    });
    assert.deepEqual(wrong, []);
  });

  it("sends the texts the README quotes, word for word", () => {
    const sent = readFileSync(join(folder, "texts.jsonl"), "utf8").trim().split("\n").map((line) => (JSON.parse(line) as { sms: { body: string } }).sms.body);
    const quoted = [...readme.matchAll(/[Tt]exted[^"\n]*"([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(quoted.length >= 2, "the README quotes the texts it sends");
    for (const text of quoted) assert.ok(sent.some((body) => matchesShown(text, body)), `no text sent reads "${text}"; sent:\n${sent.join("\n")}`);
  });
});

describe("the README walkthrough, read without running it", () => {
  it("sets every variable a command reads in an earlier command, OAuth section included", () => {
    const assigned = new Set<string>();
    const unset: string[] = [];
    for (const step of walkthrough) {
      for (const name of step.reads) if (!assigned.has(name)) unset.push(`$${name} in: ${step.command}`);
      for (const [, name] of step.command.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Za-z_]\w*)=/gm)) assigned.add(name!);
      for (const [, name] of step.command.matchAll(/^(\w+)\(\)/gm)) assigned.add(name!);
    }
    assert.deepEqual(unset, []);
  });

  it("dates its appointments from today, so they are in the future whenever it is read", () => {
    const appointments = walkthrough.filter((step) => step.section.startsWith("Appointment reminders"));
    assert.ok(appointments.some((step) => step.command.includes("eventDateTime")));
    const literal = appointments.filter((step) => /\d{4}-\d{2}-\d{2}/.test(step.command)).map((step) => step.command);
    assert.deepEqual(literal, []);
  });

  it("finds the walkthrough's commands and the outputs it shows", () => {
    assert.ok(ranWithoutBrowser.length > 40, `only ${ranWithoutBrowser.length} commands found`);
    assert.ok(ranWithoutBrowser.filter((step) => shownOutput(step.shown) !== undefined).length > 25);
  });
});
