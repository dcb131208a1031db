import { createServer } from "node:http";
import express from "express";
import { expressRouter } from "../../adapters/http/express/index.ts";
import { httpAdapterConformance } from "../../src/testkit/index.ts";
import { listening, makeConformanceKit } from "../support/http-hosts.ts";

httpAdapterConformance("express", {
  makeKit: makeConformanceKit,
  async mount(mounts, { hostParsesBodies }) {
    const app = express();
    if (hostParsesBodies) app.use(express.json(), express.urlencoded({ extended: false }));
    for (const { kit, prefix, groups } of mounts) app.use(expressRouter(kit, { prefix, groups }));
    app.get("/host/hello", (_request, response) => void response.json({ host: "hello" }));
    app.post("/host/echo", express.json(), (request, response) => void response.json({ host: request.body }));
    return listening(createServer(app));
  },
});
