import { fetchHandler } from "../../adapters/http/fetch/index.ts";
import { httpAdapterConformance } from "../../src/testkit/index.ts";
import { fetchBridgeServer } from "../support/fetch-bridge.ts";
import { listening, makeConformanceKit } from "../support/http-hosts.ts";

async function hostRoutes(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (request.method === "GET" && pathname === "/host/hello") return Response.json({ host: "hello" });
  if (request.method === "POST" && pathname === "/host/echo") return Response.json({ host: await request.json() });
  return Response.json({ host: "not found" }, { status: 404 });
}

// Fetch hosts hand over the Request untouched: hostParsesBodies does not apply.
httpAdapterConformance("fetch", {
  makeKit: makeConformanceKit,
  async mount(mounts) {
    const handlers = mounts.map(({ kit, prefix, groups }) => fetchHandler(kit, { prefix, groups }));
    const chain = (request: Request, index: number): Promise<Response> =>
      index === handlers.length ? hostRoutes(request) : handlers[index]!(request, () => chain(request, index + 1));
    return listening(fetchBridgeServer((request) => chain(request, 0)));
  },
});
