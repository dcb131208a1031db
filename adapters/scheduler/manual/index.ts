export { manualScheduler, type ManualScheduler } from "./manual-scheduler.ts";
