#!/usr/bin/env node
import { cliCommands, CliUsageError, runCli, silentLogger, stringOption, type CliCommand } from "../src/index.ts";
import { backupCommand, restoreCommand } from "./backup.ts";
import { configFromEnv, dataDirSecret, publicUrlFromEnv, webhooksAllowPrivateFromEnv, type ServerConfig } from "./config.ts";
import { deliveryFromEnv } from "./delivery-config.ts";
import { migrateStorage } from "./migrate-storage.ts";
import { createServerKit, serverPlugins } from "./server-kit.ts";
import { smsProviderFromEnv } from "./sms-config.ts";
import { startServer } from "./server.ts";

const serve: CliCommand = {
  name: "serve",
  summary: "Run the self-hosted server (same as npm start); SIGTERM or SIGINT stops it gracefully",
  options: { port: { type: "string", description: "Port to listen on (default PORT or 3000)", placeholder: "N" } },
  async run(values, context) {
    const portText = stringOption(values, "port");
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new CliUsageError("--port must be a port number");
    let config: ServerConfig;
    try {
      config = configFromEnv(process.env, { port, dataDir: context.dataDir });
    } catch (error) {
      throw new CliUsageError(`bad configuration: ${(error as Error).message}`);
    }
    const running = await startServer(config);
    await new Promise<void>((resolve) => {
      for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve());
    });
    await running.close();
    return { json: { stopped: true }, text: "reachkit stopped" };
  },
};

const code = await runCli(process.argv.slice(2), {
  commands: [...cliCommands(serverPlugins()), serve, backupCommand, restoreCommand, migrateStorage],
  defaultDataDir: process.env.REACHKIT_DATA_DIR ?? "./data",
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  interactive: process.stderr.isTTY,
  async openKit(dataDir) {
    const kit = createServerKit({
      dataDir,
      databaseUrl: process.env.REACHKIT_DATABASE_URL || undefined,
      publicUrl: publicUrlFromEnv(process.env),
      secret: process.env.REACHKIT_SECRET || dataDirSecret(dataDir),
      logger: silentLogger(),
      sms: smsProviderFromEnv(process.env),
      delivery: deliveryFromEnv(process.env),
      webhooksAllowPrivateTargets: webhooksAllowPrivateFromEnv(process.env),
    });
    await kit.start({ runJobs: false });
    return kit;
  },
});
process.exitCode = code;
