import type { Clock } from "../ports/clock.ts";
import type { CollectionSpec, Doc, Storage } from "../ports/storage.ts";
import type { PluginContext, ReachkitPlugin } from "./plugin.ts";

interface AppliedMigration extends Doc {
  plugin: string;
  appliedAt: number;
}

export const MIGRATIONS_COLLECTION = "reachkit_migrations";
export const migrationsCollection: CollectionSpec = { name: MIGRATIONS_COLLECTION };

/** A migration of the kit's own collections (the outbox's), recorded as `reachkit:<id>`. Ids must never change. */
export interface KernelMigration {
  id: string;
  up(storage: Storage): Promise<void>;
}

const KERNEL = "reachkit";

/**
 * Runs each kernel migration, then each plugin migration, once per database,
 * in declaration order, each in a transaction together with its ledger entry:
 * a failed migration leaves no trace and runs again at the next start.
 */
export async function runMigrations(
  storage: Storage,
  clock: Clock,
  plugins: readonly ReachkitPlugin[],
  contextOf: (plugin: ReachkitPlugin) => PluginContext,
  kernelMigrations: readonly KernelMigration[] = [],
): Promise<void> {
  const ledger = storage.collection<AppliedMigration>(MIGRATIONS_COLLECTION);
  const once = async (owner: string, migrationId: string, up: () => Promise<void>) => {
    const id = `${owner}:${migrationId}`;
    if (await ledger.get(id)) return;
    await storage.transaction(async () => {
      await up();
      await ledger.insert({ id, plugin: owner, appliedAt: clock.now() });
    });
  };
  for (const migration of kernelMigrations) await once(KERNEL, migration.id, () => migration.up(storage));
  for (const plugin of plugins) {
    for (const migration of plugin.migrations ?? []) await once(plugin.name, migration.id, () => migration.up(contextOf(plugin)));
  }
}
