export { systemClock } from "../../src/index.ts";
export { fakeClock, type FakeClock } from "./fake-clock.ts";
