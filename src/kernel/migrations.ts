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
  for (const plugin of plugins) {
    for (const migration of plugin.migrations ?? []) await runOnce(storage, clock, plugin.name, migration.id, () => migration.up(contextOf(plugin)));
  }
}

/** A data migration of the kit's own collections (the outbox, the jobs): the plugins' rule, before theirs. */
export interface CoreMigration {
  id: string;
  /** `now`: the kit's clock when it runs. */
  up(storage: Storage, now: number): Promise<void>;
}

/** The kit's own migrations' owner in the ledger. */
const CORE = "reachkit";

export async function runCoreMigrations(storage: Storage, clock: Clock, migrations: readonly CoreMigration[]): Promise<void> {
  for (const migration of migrations) await runOnce(storage, clock, CORE, migration.id, () => migration.up(storage, clock.now()));
}

async function runOnce(storage: Storage, clock: Clock, owner: string, migrationId: string, up: () => Promise<void>): Promise<void> {
  const ledger = storage.collection<AppliedMigration>(MIGRATIONS_COLLECTION);
  const id = `${owner}:${migrationId}`;
  if (await ledger.get(id)) return;
  await storage.transaction(async () => {
    await up();
    await ledger.insert({ id, plugin: owner, appliedAt: clock.now() });
  });
}
