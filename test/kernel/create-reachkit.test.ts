import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../../plugins/accounts/index.ts";
import { subscriptionsPlugin } from "../../plugins/subscriptions/index.ts";
import {
  createReachkit,
  DELETE_SUBJECT_DATA,
  defineRoute,
  definePlugin,
  defineToken,
  DuplicateBindingError,
  inject,
  injectable,
  MissingDependencyError,
  OBJECT_STORAGE,
  PUBLIC_URL,
  reply,
  SECRET,
  silentLogger,
  STORAGE,
  type DeleteSubjectData,
  type PublicUrl,
} from "../../src/index.ts";
import { startTestKit, TEST_SECRET } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const baseOptions = () => ({ storage: memoryStorage(), scheduler: manualScheduler(), logger: silentLogger(), secret: TEST_SECRET });

describe("createReachkit", () => {
  it("fails at boot when a plugin needs a port nobody provides, naming plugin, token and providers", () => {
    const catalogLike = definePlugin({ name: "needs-objects", requires: [OBJECT_STORAGE] });
    assert.throws(
      () => createReachkit({ ...baseOptions(), plugins: [catalogLike] }),
      (error: unknown) => {
        assert.ok(error instanceof MissingDependencyError);
        assert.match(error.message, /plugin "needs-objects" requires ObjectStorage/);
        assert.match(error.message, /reachkit\/adapters\/object-storage\/fs/);
        assert.match(error.message, /reachkit\/adapters\/object-storage\/memory/);
        return true;
      },
    );
  });

  it("requires the accounts plugin as soon as a plugin has authenticated routes", () => {
    const secured = definePlugin({
      name: "secured",
      routes: () => [defineRoute({ method: "GET", path: "/v1/thing", auth: { kind: "api" }, handler: () => reply.json(200, {}) })],
    });
    assert.throws(() => createReachkit({ ...baseOptions(), plugins: [secured] }), /plugin "secured" requires Accounts.*plugins\/accounts/);
  });

  it("checks a plugin's declared needs before building its routes, which may resolve them", () => {
    const service = defineToken<{ name: string }>("GreetingService", ["reachkit/plugins/greetings"]);
    const greeter = definePlugin({
      name: "greeter",
      requires: [service],
      routes: ({ resolve }) => {
        const greeting = resolve(service);
        return [defineRoute({ method: "GET", path: "/hello", auth: { kind: "none" }, handler: () => reply.json(200, greeting) })];
      },
    });
    assert.throws(() => createReachkit({ ...baseOptions(), plugins: [greeter] }), (error: unknown) => {
      assert.ok(error instanceof MissingDependencyError, String(error));
      assert.match(error.message, /plugin "greeter" requires GreetingService.*plugins\/greetings/);
      return true;
    });
  });

  it("refuses a short secret, a plugin installed twice and a port bound twice", () => {
    assert.throws(() => createReachkit({ ...baseOptions(), secret: "short" }), /secret/);
    assert.throws(() => createReachkit({ ...baseOptions(), plugins: [accountsPlugin(), accountsPlugin()] }), /installed twice/);
    const kit = createReachkit(baseOptions());
    assert.throws(() => kit.container.bind(STORAGE, { useValue: memoryStorage() }), DuplicateBindingError);
    kit.container.bind(STORAGE, { useValue: memoryStorage() }, { override: true });
  });

  it("does not depend on plugin order", async () => {
    for (const plugins of [[accountsPlugin(), subscriptionsPlugin()], [subscriptionsPlugin(), accountsPlugin()]]) {
      const kit = createReachkit({ ...baseOptions(), plugins });
      await kit.start();
      const { output } = await kit.provisionCompany({ name: "Order" });
      const response = await kit.inject({ url: "/v1/me", headers: { authorization: `Bearer ${output.apiKey}` } });
      assert.equal(response.status, 200);
      assert.equal((output.signUpSources as unknown[]).length, 2);
      await kit.stop();
    }
  });

  it("gives two kits in one process nothing in common", async () => {
    const first = await startTestKit();
    const second = await startTestKit();
    const token = defineToken<{ value: number }>("Counter");
    first.kit.container.bind(token, { useValue: { value: 1 } });
    assert.equal(second.kit.container.has(token), false);
    assert.notEqual(first.kit.plugin("accounts"), second.kit.plugin("accounts"));
    const crossed = await second.request({ url: "/v1/me", token: first.company.apiKey });
    assert.equal(crossed.status, 401);
    await first.stop();
    await second.stop();
  });

  it("refuses requests before start and after stop", async () => {
    const kit = createReachkit({ ...baseOptions(), plugins: [accountsPlugin()] });
    assert.throws(() => kit.inject({ url: "/v1/me" }), /start/);
    await kit.start();
    await kit.stop();
    assert.throws(() => kit.inject({ url: "/v1/me" }), /start/);
  });

  it("lets running requests finish on stop and answers 503 to new ones", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = definePlugin({
      name: "slow",
      routes: () => [
        defineRoute({
          method: "GET",
          path: "/slow",
          auth: { kind: "none" },
          async handler() {
            await gate;
            return reply.json(200, { done: true });
          },
        }),
      ],
    });
    const kit = createReachkit({ ...baseOptions(), plugins: [slow] });
    await kit.start();
    const running = kit.inject({ url: "/slow" });
    const stopping = kit.stop();
    const late = await kit.http.handle({ method: "GET", url: "/slow", headers: {} });
    assert.equal(late.status, 503);
    release();
    assert.equal((await running).status, 200);
    await stopping;
  });

  it("runs plugin migrations once per database and records them in the ledger", async () => {
    const file = join(temporaryDirectory("migrations"), "kit.db");
    let runs = 0;
    const migrating = () =>
      definePlugin({
        name: "migrating",
        collections: [{ name: "migrating_items" }],
        migrations: [
          {
            id: "001-seed",
            async up({ storage }) {
              runs++;
              await storage.collection<{ id: string }>("migrating_items").insert({ id: "seeded" });
            },
          },
        ],
      });
    for (let start = 0; start < 2; start++) {
      const kit = createReachkit({ ...baseOptions(), storage: sqliteStorage({ filename: file }), plugins: [migrating()] });
      await kit.start();
      assert.ok(await kit.storage.collection("migrating_items").get("seeded"));
      assert.ok(await kit.storage.collection("reachkit_migrations").get("migrating:001-seed"));
      await kit.stop();
    }
    assert.equal(runs, 1);
  });

  it("gives every plugin the kit's deleteSubjectData, which runs every plugin's hook (a job has no kit at hand)", async () => {
    const seen: string[] = [];
    const holder = (name: string, count: number) =>
      definePlugin({
        name,
        async deleteSubjectData(_context, subject) {
          seen.push(`${name}:${subject.companyId}:${subject.phone}`);
          return count;
        },
      });
    let fromContext: ((subject: { companyId: string; phone: string }) => Promise<number>) | undefined;
    const caller = definePlugin({ name: "caller", register: (context) => void (fromContext = context.deleteSubjectData) });
    const kit = createReachkit({ ...baseOptions(), plugins: [holder("a", 2), caller, holder("b", 3)] });
    await kit.start();
    assert.equal(await fromContext!({ companyId: "c1", phone: "+19148440001" }), 5);
    assert.deepEqual(seen, ["a:c1:+19148440001", "b:c1:+19148440001"]);
    assert.equal(await kit.deleteSubjectData({ companyId: "c2", phone: "+1" }), 5);
    await kit.stop();
  });

  it("binds the kit secret, its public URLs and deleteSubjectData on core tokens, for the services that inject them", async () => {
    @injectable()
    class Signer {
      constructor(
        @inject(SECRET) readonly secret: string,
        @inject(PUBLIC_URL) readonly publicUrl: PublicUrl,
        @inject(DELETE_SUBJECT_DATA) readonly deleteSubjectData: DeleteSubjectData,
      ) {}
    }
    const SIGNER = defineToken<Signer>("Signer");
    const signing = definePlugin({
      name: "signing",
      register: ({ container }) => container.bind(SIGNER, { useClass: Signer }),
      deleteSubjectData: async () => 4,
    });
    const kit = createReachkit({ ...baseOptions(), hosts: { api: "https://api.example", ui: "https://ui.example/" }, plugins: [signing] });
    await kit.start();
    const signer = kit.resolve(SIGNER);
    assert.equal(signer.secret, TEST_SECRET);
    assert.equal(signer.publicUrl("ui", "/install"), "https://ui.example/install");
    assert.equal(signer.publicUrl("messages", "/v1/messages"), "https://api.example/v1/messages");
    assert.equal(await signer.deleteSubjectData({ companyId: "c1", phone: "+19148440001" }), 4);
    await kit.stop();
  });
});
