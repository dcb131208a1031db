import { fakeClock, type FakeClock } from "../../adapters/clock/index.ts";
import { memoryEmail } from "../../adapters/email/memory/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { manualScheduler, type ManualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memorySms, type MemorySms } from "../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { oauthPlugin } from "../../plugins/oauth/index.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { createReachkit, silentLogger, type Reachkit, type ReachkitConfigInput, type ReachkitOptions, type ReachkitPlugin } from "../../src/index.ts";
import { fastPasswords } from "./oauth.ts";
import { TEST_SECRET } from "./test-kit.ts";

/** Every plugin of the self-hosted server, the OAuth plugin with a cheap password hash (tests sign in often). */
export const serverPluginsWithFastPasswords = (): ReachkitPlugin[] =>
  serverPlugins().map((plugin) => (plugin.name === "oauth" ? oauthPlugin({ passwordHasher: fastPasswords }) : plugin));

export interface ServerPluginsKit {
  kit: Reachkit;
  clock: FakeClock;
  scheduler: ManualScheduler;
  sms: MemorySms;
}

/**
 * A started kit with every plugin of the self-hosted server on memory adapters (SMS and email),
 * at these public URLs (uploads go to the first), with a fake clock and the manual scheduler.
 */
export async function startServerPluginsKitWith(
  hosts: ReachkitOptions["hosts"],
  options: { plugins?: readonly ReachkitPlugin[]; config?: ReachkitConfigInput } = {},
): Promise<ServerPluginsKit> {
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const scheduler = manualScheduler(clock);
  const sms = memorySms();
  const baseUrl = typeof hosts === "string" ? hosts : undefined;
  const kit = createReachkit({
    storage: memoryStorage(),
    scheduler,
    clock,
    sms,
    email: memoryEmail(),
    objectStorage: memoryObjectStorage({ clock, ...(baseUrl ? { baseUrl } : {}) }),
    logger: silentLogger(),
    hosts,
    secret: TEST_SECRET,
    plugins: options.plugins ?? serverPlugins(),
    config: options.config,
  });
  await kit.start();
  return { kit, clock, scheduler, sms };
}

/** A started kit with every plugin of the self-hosted server on memory adapters, at these public URLs. */
export async function startServerPluginsKit(hosts: ReachkitOptions["hosts"]): Promise<Reachkit> {
  return (await startServerPluginsKitWith(hosts)).kit;
}
