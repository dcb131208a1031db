export { expressRouter, type ExpressRouterOptions } from "./express-router.ts";
