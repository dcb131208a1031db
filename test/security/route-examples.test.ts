import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serverPlugins } from "../../server/server-kit.ts";
import { startTestKit } from "../support/test-kit.ts";
import { ROUTE_EXAMPLES, routeKey } from "./support/route-examples.ts";

describe("the fuzzer's example requests", () => {
  it("cover every route of the self-hosted server, and name no route that is gone", async () => {
    const t = await startTestKit({ plugins: serverPlugins() });
    const served = t.kit.http.routes.map(routeKey).sort();
    await t.stop();
    assert.deepEqual(
      served.filter((key) => !(key in ROUTE_EXAMPLES)),
      [],
      "add a valid request for each new route to test/security/support/route-examples.ts (it is fuzzed either way; the example lets mutations reach the handler)",
    );
    assert.deepEqual(Object.keys(ROUTE_EXAMPLES).filter((key) => !served.includes(key)), []);
  });
});
