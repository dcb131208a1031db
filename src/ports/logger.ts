import { defineToken } from "../kernel/token.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, unknown>;

/** Structured logging. Fields are merged into the entry; `child` adds fields to every entry. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export const LOGGER = defineToken<Logger>("Logger", ["reachkit (jsonLogger, silentLogger)"]);
