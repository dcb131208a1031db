// An Express app in plain ESM that embeds the installed reachkit under /reachkit.
import express from "express";
import { expressRouter } from "reachkit/adapters/http/express";
import { ready, startHostKit } from "./host-kit.mjs";

const { kit, apiKey, texts } = await startHostKit("Express Shop");
const app = express();
app.use(expressRouter(kit, { prefix: "/reachkit" }));
app.get("/texts", (request, response) => response.json(texts()));
const server = app.listen(0, () => ready(server.address().port, apiKey));
process.once("SIGTERM", () => server.close(() => kit.stop()));
