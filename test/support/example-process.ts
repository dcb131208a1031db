import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

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

/** Runs an example's entry point (what its npm script runs) with a fresh data directory, until it logs "listening". */
export async function startExampleProcess(entry: string, env: Record<string, string>): Promise<ExampleProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const logs: Array<Record<string, unknown>> = [];
  let apiKey = "";
  let printed = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const port = await new Promise<number>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`${entry} exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      apiKey ||= /apiKey:\s+(\S+)/.exec(line)?.[1] ?? "";
      if (!line.startsWith("{")) {
        printed += `${line}\n`;
        return;
      }
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === "listening") resolve(entry.port as number);
    });
  });
  return {
    child,
    port,
    apiKey,
    get printed() {
      return printed;
    },
    logs,
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
