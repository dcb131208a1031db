import { closeOnSignals } from "./signals.ts";
import { configFromEnv } from "./config.ts";
import { startServer } from "./server.ts";

/** `npm start`: the self-hosted server, configured from the environment. */
const running = await startServer(configFromEnv());
closeOnSignals(() => running.close());
