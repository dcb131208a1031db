export { fileSms, type FileSmsOptions } from "./file-sms.ts";
