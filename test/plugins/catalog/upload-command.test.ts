import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { configFromEnv } from "../../../server/config.ts";
import { startServer, type RunningServer } from "../../../server/server.ts";
import { cliAt } from "../../support/cli.ts";
import { TEST_SECRET } from "../../support/test-kit.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { ndjson, product } from "./support.ts";

// `reachkit catalog upload FILE` beside a running self-hosted server, as an operator uses it.

let server: RunningServer;
let dataDir: string;
let companyId: string;

before(async () => {
  dataDir = temporaryDirectory("catalog-cli");
  let printed = "";
  server = await startServer(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir }), (text) => void (printed += text));
  companyId = /companyId:\s+(\S+)/.exec(printed)![1]!;
});
after(() => server.close());

function catalogFile(...lines: unknown[]): string {
  const file = join(temporaryDirectory("catalog-file"), "catalog.ndjson");
  writeFileSync(file, ndjson(...lines));
  return file;
}

describe("reachkit catalog upload", () => {
  it("sends the file to the server, shows a progress bar until it is processed, and prints the lines, products saved and errors", async () => {
    const file = catalogFile(product("tee"), product("mug"), { ...product("cap"), link: "javascript:alert(1)" });
    const result = await cliAt(server.url, dataDir, "catalog", "upload", file, "--company", companyId);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^uploadId:\s+\w+\nstatus:\s+completed\nlinesValidated:\s+3\nproductsSaved:\s+2\nerrors:\s+1\nseconds:\s+[\d.]+\nerrors:\n  line 3  INVALID_VALUE  link must be an http\(s\) URL\n$/);
    const frames = result.stderr.trimEnd().split("\n");
    assert.match(frames[0]!, /^uploading {2}\[#*-*\] +\d+% {2}0\.0 MB of 0\.0 MB$/);
    assert.equal(frames.at(-1), `catalog.ndjson  [${"#".repeat(24)}] 100%  completed  lines 3 of 3  saved 2  errors 1`);
    assert.equal((await server.kit.plugin("catalog").getProduct(companyId, "mug"))?.name, "Product mug");
  });

  it("only validates with --validate-only: the products are counted as valid, none is saved", async () => {
    const result = await cliAt(server.url, dataDir, "catalog", "upload", catalogFile(product("hat")), "--company", companyId, "--validate-only", "--json");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.status, "validated");
    assert.equal(result.json.productsProcessed, 1);
    assert.match(result.stderr, /validated {2}lines 1 of 1 {2}valid 1 {2}errors 0\n$/);
    assert.equal(await server.kit.plugin("catalog").getProduct(companyId, "hat"), undefined);
  });

  it("says so in one line when no server answers at the public URL, and when FILE is missing or unreadable", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const down = await cliAt(`http://127.0.0.1:${port}`, dataDir, "catalog", "upload", catalogFile(product("tee")), "--company", companyId);
    assert.equal(down.code, 1);
    assert.match(down.stderr, new RegExp(`^(uploading .*\\n)*reachkit catalog upload failed: no reachkit server answered at http://127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED.*\\); start it, or set REACHKIT_PUBLIC_URL \\(or PORT\\) to where it listens\\n$`));

    const missing = await cliAt(server.url, dataDir, "catalog", "upload", "--company", companyId);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^reachkit catalog upload: FILE is required/);
    const unreadable = await cliAt(server.url, dataDir, "catalog", "upload", join(dataDir, "nothing.ndjson"), "--company", companyId);
    assert.equal(unreadable.code, 2);
    assert.match(unreadable.stderr, /cannot read .*nothing\.ndjson/);
  });
});
