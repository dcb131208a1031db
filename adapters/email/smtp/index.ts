export { smtpEmail, type SmtpEmailOptions } from "./smtp-email.ts";
