export { messagesApiHeaders, twilioSms, TWILIO_STATUS_PATH, type TwilioSmsOptions } from "./twilio-sms.ts";
