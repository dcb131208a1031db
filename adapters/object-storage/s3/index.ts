export { s3ObjectStorage, type S3ObjectStorageOptions } from "./s3-object-storage.ts";
