import type { LogFields, Logger, LogLevel } from "../ports/logger.ts";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface JsonLoggerOptions {
  level?: LogLevel;
  /** Receives one JSON line per entry; defaults to standard output. */
  write?: (line: string) => void;
  /** Fields on every entry. */
  fields?: LogFields;
  now?: () => number;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && value in LEVELS;
}

/** One JSON object per line: `{"time","level","msg",...fields}`. Errors are flattened to name, message and stack. */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? "info"];
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const now = options.now ?? Date.now;

  function make(base: LogFields): Logger {
    const log = (level: LogLevel) => (msg: string, fields?: LogFields) => {
      if (LEVELS[level] < threshold) return;
      const entry = { time: new Date(now()).toISOString(), level, msg, ...base, ...fields };
      write(JSON.stringify(entry, errorReplacer));
    };
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (fields) => make({ ...base, ...fields }),
    };
  }
  return make(options.fields ?? {});
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

/** Drops everything; the default in tests. */
export function silentLogger(): Logger {
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    child: () => logger,
  };
  return logger;
}
