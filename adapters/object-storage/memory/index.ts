export { memoryObjectStorage } from "./memory-object-storage.ts";
