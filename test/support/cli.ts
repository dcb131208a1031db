import { createServerKit, serverPlugins } from "../../examples/node-http/server-kit.ts";
import { cliCommands, runCli, silentLogger } from "../../src/index.ts";
import { TEST_SECRET, type Json } from "./test-kit.ts";

/** Runs `reachkit <args> --data-dir <dataDir>` in process, with the self-hosted server's commands and kit. */
export async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: Json }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...args, "--data-dir", dataDir], {
    commands: cliCommands(serverPlugins()),
    defaultDataDir: dataDir,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    async openKit(dir) {
      const kit = createServerKit({ dataDir: dir, publicUrl: "http://localhost:3000", secret: TEST_SECRET, logger: silentLogger() });
      await kit.start({ runJobs: false });
      return kit;
    },
  });
  let json: Json;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}
