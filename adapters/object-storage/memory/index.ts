export { memoryObjectStorage, type MemoryObjectStorageOptions } from "./memory-object-storage.ts";
