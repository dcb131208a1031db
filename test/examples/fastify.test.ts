import { startFastifyExample } from "../../examples/fastify/server.ts";
import { shopExampleSmokeTest } from "../support/shop-example.ts";

shopExampleSmokeTest("fastify", startFastifyExample, "examples/fastify/main.ts");
