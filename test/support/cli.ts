import { webhooksAllowPrivateFromEnv } from "../../server/config.ts";
import { createServerKit, serverPlugins, type ServerKitOptions } from "../../server/server-kit.ts";
import { cliCommands, runCli, silentLogger, type Reachkit } from "../../src/index.ts";
import { TEST_SECRET, type Json } from "./test-kit.ts";
import { temporaryDirectory } from "./temp-dir.ts";

export const newDataDir = () => temporaryDirectory("cli");

/** What a test changes of the self-hosted kit the CLI opens (its SMS provider...). */
export type CliKitOptions = Partial<Omit<ServerKitOptions, "dataDir" | "secret" | "logger">>;

/** The self-hosted kit of a data directory, started without its job runner (REACHKIT_WEBHOOKS_ALLOW_PRIVATE read as the CLI reads it). */
export async function openServerKit(dataDir: string, publicUrl = "http://localhost:3000", options: CliKitOptions = {}): Promise<Reachkit> {
  const kit = createServerKit({
    webhooksAllowPrivateTargets: webhooksAllowPrivateFromEnv(process.env),
    ...options,
    publicUrl,
    dataDir,
    secret: TEST_SECRET,
    logger: silentLogger(),
  });
  await kit.start({ runJobs: false });
  return kit;
}

/** A new data directory holding one company, for CLI tests: its folder and the company's id. */
export async function dataDirWithCompany(name = "Acme"): Promise<{ dataDir: string; companyId: string }> {
  const dataDir = newDataDir();
  const kit = await openServerKit(dataDir);
  try {
    return { dataDir, companyId: (await kit.provisionCompany({ name })).company.id };
  } finally {
    await kit.stop();
  }
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: Json;
}

/** Runs `reachkit <args> --data-dir <dataDir>` in process; `json` is stdout parsed when it is JSON. */
export function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
  return cliAt("http://localhost:3000", dataDir, ...args);
}

/** `cli` with the server's public URL (REACHKIT_PUBLIC_URL) set to `publicUrl`. */
export function cliAt(publicUrl: string, dataDir: string, ...args: string[]): Promise<CliRun> {
  return cliWith({ publicUrl }, dataDir, ...args);
}

/** `cli` on a kit configured with `options` (a public URL, an SMS provider...). */
export async function cliWith(options: CliKitOptions, dataDir: string, ...args: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...args, "--data-dir", dataDir], {
    commands: cliCommands(serverPlugins()),
    defaultDataDir: dataDir,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    openKit: (directory) => openServerKit(directory, options.publicUrl, options),
  });
  let json: Json;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** The status of `GET /v1/me` with a token, on the data directory's kit. */
export async function whoAmI(dataDir: string, token: string): Promise<number> {
  const kit = await openServerKit(dataDir);
  const response = await kit.inject({ url: "/v1/me", headers: { authorization: `Bearer ${token}` } });
  await kit.stop();
  return response.status;
}
