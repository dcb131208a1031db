export { fsObjectStorage, type FsObjectStorageOptions } from "./fs-object-storage.ts";
