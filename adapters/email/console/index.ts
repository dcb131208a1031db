export { consoleEmail, type ConsoleEmailOptions } from "./console-email.ts";
