// A Fastify app in plain ESM that registers the installed reachkit under /reachkit.
import Fastify from "fastify";
import { fastifyPlugin } from "reachkit/adapters/http/fastify";
import { ready, startHostKit } from "./host-kit.mjs";

const { kit, apiKey, texts } = await startHostKit("Fastify Shop");
const app = Fastify();
await app.register(fastifyPlugin(kit, { prefix: "/reachkit" }));
app.get("/texts", async () => texts());
await app.listen({ port: 0, host: "127.0.0.1" });
ready(app.server.address().port, apiKey);
process.once("SIGTERM", () => app.close().then(() => kit.stop()));
