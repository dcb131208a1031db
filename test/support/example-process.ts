import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface ExampleProcess {
  child: ChildProcess;
  port: number;
  /** The API key printed on first start. */
  apiKey: string;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Runs an example's entry point (what its npm script runs) with a fresh data directory, until it logs "listening". */
export async function startExampleProcess(entry: string, env: Record<string, string>): Promise<ExampleProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const logs: Array<Record<string, unknown>> = [];
  let apiKey = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const port = await new Promise<number>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`${entry} exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      apiKey ||= /apiKey:\s+(\S+)/.exec(line)?.[1] ?? "";
      if (!line.startsWith("{")) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === "listening") resolve(entry.port as number);
    });
  });
  return {
    child,
    port,
    apiKey,
    logs,
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
