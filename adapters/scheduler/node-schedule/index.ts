export { nodeScheduleScheduler } from "./node-schedule-scheduler.ts";
