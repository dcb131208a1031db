/**
 * Conformance suites for adapter authors. Each declares node:test tests that
 * exercise a port only through its interface; run the suite of your port
 * against your adapter (see docs/writing-an-adapter.md).
 *
 * @packageDocumentation
 */
export { storageConformance } from "./storage-suite/index.ts";
export { schedulerConformance, type SchedulerHarness } from "./scheduler-suite.ts";
export { smsSenderConformance, type SmsSenderHarness, type SmsSenderCapabilities, type RefusalKind } from "./sms-sender-suite.ts";
export { httpAdapterConformance, type HttpAdapterHarness, type KitMount, type HostOptions, type MountedHost } from "./http-suite.ts";
export { conformancePlugin, ConformanceProbe, CONFORMANCE_CONFIG, type UploadOutcome } from "./http-conformance-plugin.ts";
export { objectStorageConformance, type ObjectStorageHarness, type ObjectStorageSuiteOptions, type UploadRequest } from "./object-storage-suite.ts";
export { emailSenderConformance, type EmailSenderHarness, type EmailSenderSuiteOptions, type ReceivedEmail } from "./email-sender-suite.ts";
