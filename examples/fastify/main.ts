import { configFromEnv } from "../../server/config.ts";
import { closeOnSignals } from "../../server/signals.ts";
import { startFastifyExample } from "./server.ts";

/** `npm run example:fastify`: the shop on PORT (default 3002), reachkit under /reachkit, data in ./data/fastify. */
const config = configFromEnv(process.env, { port: process.env.PORT ? undefined : 3002, dataDir: process.env.REACHKIT_DATA_DIR ?? "./data/fastify" });
const running = await startFastifyExample(config);
closeOnSignals(() => running.close());
