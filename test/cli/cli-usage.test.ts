import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { serverPlugins } from "../../server/server-kit.ts";
import { cliCommands } from "../../src/index.ts";
import { cli, newDataDir } from "../support/cli.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";

const commands = cliCommands(serverPlugins());

/** Every leading run of words that more than one command shares or that has sub-commands: "catalog", "catalog uploads"... */
function groups(): string[] {
  const found = new Set<string>();
  for (const command of commands) {
    const words = command.name.split(" ");
    for (let length = 1; length < words.length; length++) found.add(words.slice(0, length).join(" "));
  }
  return [...found].filter((group) => !commands.some((command) => command.name === group));
}

/** The bin as an operator runs it (the sources through tsx, as the tests run everything), with its own environment. */
async function reachkitBin(env: Record<string, string>, ...args: string[]): Promise<Json> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "server/cli.ts", ...args, "--json"], {
    env: { PATH: process.env.PATH, REACHKIT_SECRET: TEST_SECRET, ...env },
  });
  return JSON.parse(stdout);
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/;

/** Every time in the output is ISO 8601 (extended, with a colon in any offset), and no epoch milliseconds slipped through. */
function assertIsoTimes(output: string, what: string): void {
  assert.doesNotMatch(output, /(?<![\w-])1\d{12}(?![\w-])/, `${what} prints epoch milliseconds:\n${output}`);
  for (const [time] of output.matchAll(/\d{4}-\d{2}-\d{2}T[\d:.+Z-]*/g)) assert.match(time, ISO_8601, `${what}: ${time}`);
}

describe("reachkit CLI usage", () => {
  it("lists a group's sub-commands when the group is named alone", async () => {
    const dataDir = newDataDir();
    assert.ok(groups().includes("catalog") && groups().includes("catalog uploads"), groups().join(", "));
    for (const group of groups()) {
      const result = await cli(dataDir, ...group.split(" "));
      assert.equal(result.code, 0, `${group}: ${result.stderr}`);
      assert.equal(result.stderr, "");
      assert.match(result.stdout, new RegExp(`^Usage: reachkit ${group} <command>`));
      for (const command of commands) {
        assert.equal(result.stdout.includes(`  ${command.name} `), command.name.startsWith(`${group} `), `${group} lists ${command.name}?`);
      }
    }
    const catalog = await cli(dataDir, "catalog");
    for (const name of ["catalog upload", "catalog uploads list", "catalog uploads show", "catalog products show"]) assert.match(catalog.stdout, new RegExp(`  ${name} `));
    const unknown = await cli(dataDir, "catalog", "frobnicate");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^reachkit: unknown command "catalog frobnicate"/);
    assert.match(unknown.stdout, /catalog uploads list/);
  });

  it("answers unknown options and missing values in its own words", async () => {
    const dataDir = newDataDir();
    const cases: Array<[string[], RegExp]> = [
      [["companies", "list", "--bogus"], /^reachkit companies list: unknown option --bogus\nRun "reachkit companies list --help" for its options\.\n$/],
      [["companies", "create", "--name"], /^reachkit companies create: --name needs a value \(--name NAME\)\n/],
      [["companies", "list", "--json=yes"], /^reachkit companies list: --json takes no value\n/],
      [["--bogus"], /^reachkit: unknown option --bogus\n/],
      [["catalog", "--bogus"], /^reachkit catalog: unknown option --bogus\n/],
      [["companies", "list", "extra"], /^reachkit companies list: unexpected argument "extra"\n/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(dataDir, ...args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /To specify a positional argument|Unknown option '/);
    }
  });

  it("prints every time in ISO 8601, as text and as JSON", async () => {
    const dataDir = newDataDir();
    const company = (await cli(dataDir, "init", "--json")).json.companyId as string;
    const runs = (format: string): string[][] => [
      ["oauth-apps", "create", "--company", company, "--name", "App", "--redirect-uri", "https://app.example/callback"],
      ["dashboard-users", "create", "--company", company, "--email", `ops-${format}@example.com`],
      ["privacy-requests", "create", "--company", company, "--phone", "+19148440001"],
      ["privacy-requests", "list", "--company", company],
      ["oauth-apps", "list", "--company", company],
      ["dashboard-users", "list", "--company", company],
      ["jobs", "list"],
      ["companies", "list"],
    ];
    let times = 0;
    for (const format of [[], ["--json"]]) {
      for (const args of runs(format.join(""))) {
        const result = await cli(dataDir, ...args, ...format);
        assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
        assertIsoTimes(result.stdout, [...args, ...format].join(" "));
        times += [...result.stdout.matchAll(/\d{4}-\d{2}-\d{2}T/g)].length;
      }
    }
    assert.ok(times >= 16, `only ${times} times printed`);
  });

  it("builds every URL it prints from REACHKIT_PUBLIC_URL, else from PORT", async () => {
    const onPort = await reachkitBin({ PORT: "4567" }, "init", "--data-dir", newDataDir());
    assert.equal(onPort.inboundWebhookUrl, `http://localhost:4567${onPort.inboundWebhookPath}`);
    const dataDir = newDataDir();
    const published = await reachkitBin({ PORT: "4567", REACHKIT_PUBLIC_URL: "https://messaging.shop.example/rk/" }, "init", "--data-dir", dataDir);
    assert.equal(published.inboundWebhookUrl, `https://messaging.shop.example/rk${published.inboundWebhookPath}`);
    const app = await reachkitBin({ PORT: "4567" }, "oauth-apps", "create", "--company", published.companyId, "--name", "App", "--redirect-uri", "https://app.example/callback", "--data-dir", dataDir);
    assert.match(app.installUrl, /^http:\/\/localhost:4567\/integrations\/oauth-install\?/);
  });
});
