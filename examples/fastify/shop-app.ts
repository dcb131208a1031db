import Fastify, { type FastifyInstance } from "fastify";
import { fastifyPlugin } from "../../adapters/http/fastify/index.ts";
import type { Reachkit } from "../../src/index.ts";
import { REACHKIT_PREFIX } from "../shared/embedded.ts";
import { CATALOG, placeOrder } from "../shared/shop.ts";

/**
 * An existing Fastify shop with its own pages and JSON API, embedding reachkit
 * under /reachkit as an encapsulated plugin: reachkit's body handling stays in
 * its scope, and the shop's routes keep Fastify's own JSON parser.
 */
export async function shopApp(kit: Reachkit): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(fastifyPlugin(kit, { prefix: REACHKIT_PREFIX }));
  app.get("/", async (_request, reply) =>
    reply.type("text/html").send(`<h1>Corner Shop</h1><p>${CATALOG.length} products. Messaging API at <code>${REACHKIT_PREFIX}/v1</code>.</p>`),
  );
  app.get("/api/products", async () => CATALOG);
  app.post("/api/orders", async (request, reply) => {
    const result = placeOrder(request.body);
    return reply.code(result.status).send(result.body);
  });
  return app;
}
