export { consoleSms, type ConsoleSmsOptions } from "./console-sms.ts";
