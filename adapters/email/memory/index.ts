export { memoryEmail, type MemoryEmail, type MemoryEmailOptions, type DeliveredEmail } from "./memory-email.ts";
