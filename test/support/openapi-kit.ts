import { fakeClock } from "../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { createReachkit, silentLogger, type Reachkit, type ReachkitOptions } from "../../src/index.ts";
import { TEST_SECRET } from "./test-kit.ts";

/** A started kit with every plugin of the self-hosted server on memory adapters, at these public URLs. */
export async function startServerPluginsKit(hosts: ReachkitOptions["hosts"]): Promise<Reachkit> {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const kit = createReachkit({
    storage: memoryStorage(),
    scheduler: manualScheduler(clock),
    clock,
    sms: memorySms(),
    objectStorage: memoryObjectStorage({ clock }),
    logger: silentLogger(),
    hosts,
    secret: TEST_SECRET,
    plugins: serverPlugins(),
  });
  await kit.start();
  return kit;
}
