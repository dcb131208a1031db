import express, { type Express } from "express";
import { expressRouter } from "../../adapters/http/express/index.ts";
import type { Reachkit } from "../../src/index.ts";
import { REACHKIT_PREFIX } from "../shared/embedded.ts";
import { CATALOG, placeOrder } from "../shared/shop.ts";

/**
 * An existing Express shop with its own pages and JSON API, embedding reachkit
 * under /reachkit. reachkit is mounted before the shop's body parser here, but
 * either order works: a body express.json() parsed already is reused.
 */
export function shopApp(kit: Reachkit): Express {
  const app = express();
  app.use(expressRouter(kit, { prefix: REACHKIT_PREFIX }));
  app.use(express.json());
  app.get("/", (_request, response) => {
    response.type("html").send(`<h1>Corner Shop</h1><p>${CATALOG.length} products. Messaging API at <code>${REACHKIT_PREFIX}/v1</code>.</p>`);
  });
  app.get("/api/products", (_request, response) => void response.json(CATALOG));
  app.post("/api/orders", (request, response) => {
    const result = placeOrder(request.body);
    response.status(result.status).json(result.body);
  });
  return app;
}
