import { closeOnSignals } from "./signals.ts";
import { configFromEnv, type ServerConfig } from "./config.ts";
import { startServer } from "./server.ts";

/**
 * `npm start`: the self-hosted server, configured from the environment. A start
 * that fails says why in one line, never a stack trace: exit code 2 for a bad
 * setting, 1 when it could not start (port in use, data directory held).
 */
function fail(message: string, exitCode: number): never {
  process.stderr.write(`reachkit: ${message}\n`);
  process.exit(exitCode);
}

let config: ServerConfig;
try {
  config = configFromEnv();
} catch (error) {
  fail(`bad configuration: ${(error as Error).message}`, 2);
}
try {
  const running = await startServer(config);
  closeOnSignals(() => running.close());
} catch (error) {
  fail(`could not start: ${(error as Error).message}`, 1);
}
