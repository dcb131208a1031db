import type { Clock } from "../ports/clock.ts";
import type { CollectionSpec, Doc, Storage } from "../ports/storage.ts";
import type { PluginContext, ReachkitPlugin } from "./plugin.ts";

interface AppliedMigration extends Doc {
  plugin: string;
  appliedAt: number;
}

export const MIGRATIONS_COLLECTION = "reachkit_migrations";
export const migrationsCollection: CollectionSpec = { name: MIGRATIONS_COLLECTION };

/**
 * Runs each plugin migration once per database, in declaration order, each in
 * a transaction together with its ledger entry: a failed migration leaves no
 * trace and runs again at the next start.
 */
export async function runMigrations(
  storage: Storage,
  clock: Clock,
  plugins: readonly ReachkitPlugin[],
  contextOf: (plugin: ReachkitPlugin) => PluginContext,
): Promise<void> {
  const ledger = storage.collection<AppliedMigration>(MIGRATIONS_COLLECTION);
  for (const plugin of plugins) {
    for (const migration of plugin.migrations ?? []) {
      const id = `${plugin.name}:${migration.id}`;
      if (await ledger.get(id)) continue;
      await storage.transaction(async () => {
        await migration.up(contextOf(plugin));
        await ledger.insert({ id, plugin: plugin.name, appliedAt: clock.now() });
      });
    }
  }
}
