import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { temporaryDirectory } from "./temp-dir.ts";

export interface ExampleProcess {
  child: ChildProcess;
  port: number;
  /** The API key printed on first start. */
  apiKey: string;
  /** What it printed that is not a JSON log line (the first start's credentials). */
  printed: string;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Sends SIGKILL: the process dies at once, whatever it was doing (a crash, a power cut). */
  crash(): Promise<void>;
}

/**
 * What a process wrote to its standard output file, read on demand from where the last read ended. A file,
 * not a pipe: a process writes its standard output synchronously, so a pipe the test reads late (its own
 * event loop busy) would stall the process for as long, and a stall past the keep-alive timeout resets the
 * connections the test's requests are waiting on.
 */
class OutputFile {
  readonly logs: Array<Record<string, unknown>> = [];
  printed = "";
  readonly #fd: number;
  #position = 0;
  #partial = "";

  constructor(readonly path: string) {
    this.#fd = openSync(path, "r");
  }

  read(): void {
    const chunk = Buffer.alloc(1 << 16);
    for (let bytes; (bytes = readSync(this.#fd, chunk, 0, chunk.length, this.#position)) > 0; ) {
      this.#position += bytes;
      const lines = (this.#partial + chunk.toString("utf8", 0, bytes)).split("\n");
      this.#partial = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith("{")) this.logs.push(JSON.parse(line) as Record<string, unknown>);
        else this.printed += `${line}\n`;
      }
    }
  }

  close(): void {
    this.read();
    closeSync(this.#fd);
  }
}

/** Runs an example's entry point (what its npm script runs) with a fresh data directory, until it logs "listening". */
export async function startExampleProcess(entry: string, env: Record<string, string>): Promise<ExampleProcess> {
  const path = join(temporaryDirectory("stdout"), "stdout.log");
  const stdout = openSync(path, "w");
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", stdout, "inherit"],
  });
  closeSync(stdout);
  const output = new OutputFile(path);
  let running = true;
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve)).finally(() => {
    running = false;
    output.close();
  });
  let port: number | undefined;
  for (let seen = 0; port === undefined; await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (!running) throw new Error(`${entry} exited early with ${String(await exited)}`);
    output.read();
    for (; seen < output.logs.length && port === undefined; seen++) if (output.logs[seen]!.msg === "listening") port = output.logs[seen]!.port as number;
  }
  const apiKey = /apiKey:\s+(\S+)/.exec(output.printed)?.[1] ?? "";
  return {
    child,
    port,
    apiKey,
    get printed() {
      if (running) output.read();
      return output.printed;
    },
    get logs() {
      if (running) output.read();
      return output.logs;
    },
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
    async crash() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
