import Fastify from "fastify";
import { fastifyPlugin } from "../../adapters/http/fastify/index.ts";
import { httpAdapterConformance } from "../../src/testkit/index.ts";
import { makeConformanceKit } from "../support/http-hosts.ts";

httpAdapterConformance("fastify", {
  makeKit: makeConformanceKit,
  async mount(mounts, { hostParsesBodies }) {
    const app = Fastify();
    // A host-wide form parser must not reach reachkit's scope, which keeps its own.
    if (hostParsesBodies) {
      app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_request, body, done) =>
        done(null, Object.fromEntries(new URLSearchParams(body as string))),
      );
    }
    for (const { kit, prefix, groups } of mounts) await app.register(fastifyPlugin(kit, { prefix, groups }));
    app.get("/host/hello", async () => ({ host: "hello" }));
    app.post("/host/echo", async (request) => ({ host: request.body }));
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    return { url: address, close: () => app.close() };
  },
});
