export { systemClock } from "../../src/kernel/system-clock.ts";
export { fakeClock, type FakeClock } from "./fake-clock.ts";
