import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { Identifier } from "../../../plugins/profiles/index.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import type { TestKit } from "../../support/test-kit.ts";
import { startProfilesKit } from "./support.ts";

const phone = (i: number): Identifier => ({ kind: "phone", value: `+1914844${String(i).padStart(4, "0")}` });
const email = (i: number): Identifier => ({ kind: "email", value: `person${i}@example.com` });
const clientUserId = (value: string): Identifier => ({ kind: "clientUserId", value });

const storages = [
  ["in memory", () => memoryStorage()],
  ["on SQLite", () => sqliteStorage({ filename: join(temporaryDirectory("link-many"), "reachkit.db") })],
] as const;

/** Who is one person in `t`: each identifier with the others its live profile holds, as sorted text. */
async function people(t: TestKit, identifiers: readonly Identifier[]): Promise<string[]> {
  const profiles = t.kit.plugin("profiles");
  const byProfile = new Map<string, string[]>();
  for (const identifier of identifiers) {
    const profileId = await profiles.find(t.company.companyId, identifier);
    assert.ok(profileId, `${identifier.value} is linked`);
    byProfile.set(profileId, [...(byProfile.get(profileId) ?? []), identifier.value]);
  }
  return [...byProfile.values()].map((values) => [...new Set(values)].sort().join(" ")).sort();
}

describe("IdentityGraph.linkMany", () => {
  for (const [name, storage] of storages) {
    it(`links a list of people as link does each in turn: known, new, sharing an identifier, joining a known one (${name})`, async () => {
      const list: Identifier[][] = [
        [phone(1)], // known: nothing to write
        [phone(2), email(2)], // new
        [phone(3), clientUserId("shared")], // new, but sharing an identifier with the next
        [phone(4), clientUserId("shared")],
        [phone(1), email(5)], // joins the known person
        [phone(6), phone(6)], // new, one identifier named twice
      ];
      const linked = await Promise.all(
        [true, false].map(async (together) => {
          const t = await startProfilesKit({ storage: storage() });
          const profiles = t.kit.plugin("profiles");
          const { companyId } = t.company;
          await profiles.link(companyId, [phone(1), clientUserId("known")]);
          if (together) await profiles.linkMany(companyId, list);
          else for (const person of list) await profiles.link(companyId, person);
          const result = { people: await people(t, [...list.flat(), clientUserId("known")]), identifiers: await t.kit.storage.collection("profiles_identifiers").count() };
          await t.stop();
          return result;
        }),
      );
      assert.deepEqual(linked[0], linked[1]);
      assert.deepEqual(linked[0]!.people, [
        "+19148440001 known person5@example.com",
        "+19148440002 person2@example.com",
        "+19148440003 +19148440004 shared",
        "+19148440006",
      ]);
    });
  }

  it("links new and known people on SQLite with one read of their identifiers and one write of each table", async () => {
    const t = await startProfilesKit({ storage: sqliteStorage({ filename: join(temporaryDirectory("link-many"), "reachkit.db") }) });
    const profiles = t.kit.plugin("profiles");
    const { companyId } = t.company;
    await profiles.link(companyId, [phone(100), email(100)]);
    const linking = (from: number) => [[phone(100), email(100)], ...Array.from({ length: 4 }, (_, i) => [phone(from + i), email(from + i)])];
    const statements = async (list: Identifier[][]) =>
      (await statementsOf(() => t.kit.storage.transaction(() => profiles.linkMany(companyId, list)))).filter((sql) => /"profiles_/.test(sql)).map((sql) => sql.split(" (")[0]!.replace(/ doc FROM/, ""));
    const expected = ['SELECT "profiles_identifiers" WHERE "f_companyId" = ? AND "f_key" IN', 'INSERT INTO "profiles_profiles"', 'INSERT INTO "profiles_identifiers"'];
    assert.deepEqual(await statements(linking(0)), expected);
    assert.deepEqual(await statements(linking(10)), expected);
    assert.equal(await t.kit.storage.collection("profiles_profiles").count(), 9);
    await t.stop();
  });
});
