import { configFromEnv } from "./config.ts";
import { startServer } from "./server.ts";

/** `npm start`: the self-hosted server, configured from the environment. */
const running = await startServer(configFromEnv());
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
