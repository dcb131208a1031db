export * from "./storage.ts";
export * from "./clock.ts";
export * from "./scheduler.ts";
export * from "./logger.ts";
export * from "./sms-sender.ts";
export * from "./object-storage.ts";
export * from "./email-sender.ts";
