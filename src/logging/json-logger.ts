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
  const sink: Sink = {
    threshold: LEVELS[options.level ?? "info"],
    write: options.write ?? ((line: string) => void process.stdout.write(`${line}\n`)),
    now: options.now ?? Date.now,
  };
  return new JsonLogger(sink, options.fields ?? {});
}

interface Sink {
  threshold: number;
  write: (line: string) => void;
  now: () => number;
}

// A class, not closures: the HTTP pipeline makes a child per request, so a child must cost one small object.
class JsonLogger implements Logger {
  constructor(
    private readonly sink: Sink,
    private readonly fields: LogFields,
  ) {}

  debug(message: string, fields?: LogFields): void {
    this.#log("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.#log("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.#log("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.#log("error", message, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.sink, { ...this.fields, ...fields });
  }

  #log(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    if (LEVELS[level] < this.sink.threshold) return;
    const entry = { time: new Date(this.sink.now()).toISOString(), level, msg, ...this.fields, ...fields };
    this.sink.write(JSON.stringify(entry, errorReplacer));
  }
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
