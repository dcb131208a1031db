import { configFromEnv } from "../../server/config.ts";
import { closeOnSignals } from "../../server/signals.ts";
import { startExpressExample } from "./server.ts";

/** `npm run example:express`: the shop on PORT (default 3001), reachkit under /reachkit, data in ./data/express. */
const config = configFromEnv(process.env, { port: process.env.PORT ? undefined : 3001, dataDir: process.env.REACHKIT_DATA_DIR ?? "./data/express" });
const running = await startExpressExample(config);
closeOnSignals(() => running.close());
