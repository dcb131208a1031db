import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { createReachkit, definePlugin, silentLogger, type Reachkit, type ReachkitOptions, type ReachkitPlugin } from "../../src/index.ts";
import { TEST_SECRET } from "./test-kit.ts";

/**
 * A kit whose one plugin registers `jobs` (and `collections`): what the job runner's tests build. Memory
 * storage unless `storage` is given; the scheduler (manual or real-time) is the test's choice.
 */
export function kitWithJobs(
  jobs: NonNullable<ReachkitPlugin<string, unknown>["jobs"]>,
  options: Pick<ReachkitOptions, "scheduler"> & Partial<Pick<ReachkitOptions, "storage" | "clock" | "config">> & Pick<ReachkitPlugin<string, unknown>, "collections">,
): Reachkit {
  const { collections, storage, ...rest } = options;
  return createReachkit({
    ...rest,
    storage: storage ?? memoryStorage(),
    logger: silentLogger(),
    secret: TEST_SECRET,
    plugins: [definePlugin({ name: "test-jobs", jobs, ...(collections ? { collections } : {}) })],
  });
}
