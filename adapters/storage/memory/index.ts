export { memoryStorage } from "./memory-storage.ts";
