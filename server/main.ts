import { closeOnSignals } from "./signals.ts";
import { configFromEnv } from "./config.ts";
import { DataDirInUseError } from "./data-dir-lock.ts";
import { startServer } from "./server.ts";

/** `npm start`: the self-hosted server, configured from the environment. */
try {
  const running = await startServer(configFromEnv());
  closeOnSignals(() => running.close());
} catch (error) {
  // A refusal the operator acts on, not a bug: its message without a stack trace.
  if (!(error instanceof DataDirInUseError)) throw error;
  process.stderr.write(`reachkit: ${error.message}\n`);
  process.exitCode = 1;
}
