export { memorySms, type MemorySms, type DeliveredSms } from "./memory-sms.ts";
