import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { freePort } from "../support/free-port.ts";
import { JOBS_IDLE } from "./shell-walkthrough.ts";

/** Runs `jobs_idle` as the walkthrough's script does (set -euo pipefail), against the server on `port`; killed if it never returns. */
function jobsIdle(port: number): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)("bash", ["-c", `set -euo pipefail\n${JOBS_IDLE}jobs_idle`], { env: { ...process.env, PORT: String(port) }, timeout: 60_000 });
}

/** Other series of a long-running server (one histogram per route): far more than a pipe holds. */
const OTHER_SERIES = Array.from({ length: 1500 }, (_, index) => `reachkit_http_request_duration_seconds_bucket{le="${index}"} 0\n`).join("");

describe("jobs_idle, the walkthrough's wait for the server's jobs", () => {
  let server: Server | undefined;

  after(() => server?.close());

  it("waits while a job runs, when the metrics come in two parts of more than a pipe holds", async () => {
    // The job runs during the first three answers. Each answer is the job series, then the rest a moment
    // later, as a loaded machine may deliver a long answer: grep has found its line before the rest comes.
    let answers = 0;
    server = createServer((_request, response) => {
      answers++;
      response.writeHead(200, { "content-type": "text/plain" });
      response.write(`reachkit_jobs{state="due"} 0\nreachkit_jobs{state="running"} ${answers <= 3 ? 1 : 0}\n${OTHER_SERIES}`);
      setTimeout(() => response.end(OTHER_SERIES), 50);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server!.listen(port, resolve));

    await jobsIdle(port);

    assert.equal(answers, 4, "jobs_idle returned before the metrics said no job runs");
  });

  it("stops the script when the server does not answer, rather than take that for idle", async () => {
    const port = await freePort();
    await assert.rejects(jobsIdle(port), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 7); // curl: could not connect
      assert.match(error.stderr, /curl: \(7\)/);
      return true;
    });
  });
});
