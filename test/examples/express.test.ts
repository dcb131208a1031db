import { startExpressExample } from "../../examples/express/server.ts";
import { shopExampleSmokeTest } from "../support/shop-example.ts";

shopExampleSmokeTest("express", startExpressExample, "examples/express/main.ts");
