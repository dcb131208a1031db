export { smppSms, type SmppSmsOptions } from "./smpp-sms.ts";
