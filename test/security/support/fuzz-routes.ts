import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import type { AnyRoute, InjectRequest, InjectResponse } from "../../../src/index.ts";
import { answerProblem } from "./answer-shape.ts";
import { requestArb } from "./fuzz-requests.ts";
import { startFuzzWorld, type FuzzWorld } from "./fuzz-world.ts";
import { ROUTE_EXAMPLES, routeKey } from "./route-examples.ts";

/** Requests per route: 500 in CI; REACHKIT_FUZZ_RUNS=20000 for a longer local run. */
export const FUZZ_RUNS = Number(process.env.REACHKIT_FUZZ_RUNS ?? 500);
/** No answer may take longer (issue 9). */
export const ANSWER_DEADLINE_MS = 5_000;

/**
 * fast-check options whose failure message starts with what went wrong: the default
 * puts the counterexample first (a fuzzed request can be 16 KB on one line) and the
 * error only in `cause`, which the test reporter does not print.
 */
export function fuzzOptions(numRuns: number): fc.Parameters<[unknown]> {
  return {
    numRuns,
    reporter(details) {
      if (!details.failed) return;
      const { errorInstance: error, counterexample } = details;
      const reason = error instanceof Error ? error.message : error === null ? fc.defaultReportMessage(details) : String(error);
      const replay = `seed ${details.seed}, path "${details.counterexamplePath}", shrunk ${details.numShrinks} times`;
      throw new Error(`${reason}\n(${replay}; counterexample: ${fc.stringify(counterexample).slice(0, 1_000)})`);
    },
  };
}

async function withDeadline(request: Promise<InjectResponse>): Promise<InjectResponse | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ANSWER_DEADLINE_MS)));
  try {
    return await Promise.race([request, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const describeRequest = (request: InjectRequest) =>
  JSON.stringify({ ...request, body: typeof request.body === "string" ? request.body.slice(0, 300) : request.body }).slice(0, 800);

/** Fuzzes one route: every request must get an allowed answer within the deadline, and log no error. */
async function fuzzRoute(world: FuzzWorld, route: AnyRoute): Promise<number> {
  const example = ROUTE_EXAMPLES[routeKey(route)]?.(world) ?? {};
  let tried = 0;
  await fc.assert(
    fc.asyncProperty(requestArb(route, world, example), async (request) => {
      tried++;
      const errorsBefore = world.errors.length;
      const response = await withDeadline(world.kit.inject(request));
      if (response === "timeout") throw new Error(`no answer within ${ANSWER_DEADLINE_MS} ms to ${describeRequest(request)}`);
      const problem = answerProblem(route, response, request.method);
      if (problem) throw new Error(`${problem}: ${response.body.slice(0, 300)}\nrequest: ${describeRequest(request)}`);
      const logged = world.errors.slice(errorsBefore);
      if (logged.length > 0) throw new Error(`logged "${logged[0]!.message}" (${String(logged[0]!.fields.error)}) for ${describeRequest(request)}`);
    }),
    fuzzOptions(FUZZ_RUNS),
  );
  return tried;
}

/**
 * Fuzzes every route the self-hosted server's kit serves (read from the kit,
 * so a new route is covered without listing it), shard `index` of `count`:
 * the routes are split over several test files that run in parallel.
 */
export async function fuzzShard(index: number, count: number): Promise<void> {
  const world = await startFuzzWorld();
  after(() => world.stop());
  const routes = [...world.kit.http.routes].sort((a, b) => routeKey(a).localeCompare(routeKey(b))).filter((_, position) => position % count === index);
  describe(`fuzzing routes (shard ${index + 1} of ${count}, ${FUZZ_RUNS} requests each)`, () => {
    for (const route of routes) {
      it(`${routeKey(route)}: every answer a 2xx or a documented 4xx within ${ANSWER_DEADLINE_MS} ms`, { timeout: 120_000 }, async (t) => {
        const tried = await fuzzRoute(world, route);
        t.diagnostic(`${routeKey(route)}: ${tried} requests`);
        console.log(`fuzz: ${routeKey(route)}: ${tried} requests`);
        const me = await world.kit.inject({ url: "/v1/me", headers: { authorization: `Bearer ${world.apiKey}` } });
        assert.equal(me.status, 200, "the kit still answers afterwards");
      });
    }
  });
}
