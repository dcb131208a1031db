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

/**
 * One JSON object per line: `{"time","level","msg",...fields}`. Errors are
 * flattened to name, message and stack. Every string is passed through
 * {@link redactLogText}, so a provider's error that names a number, or a token in an
 * error message, never reaches the log whole.
 */
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
    this.sink.write(JSON.stringify(entry, redactingReplacer));
  }
}

/** Called on every value JSON.stringify meets, so the strings of a flattened error are redacted too. */
function redactingReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return typeof value === "string" ? redactLogText(value) : value;
}

/** reachkit's credentials carry a prefix (`generateSecret`), so they are recognisable wherever they appear. */
const CREDENTIAL = /\b(rk_(?:key|leg|oat|cs|code|ses))_[A-Za-z0-9_-]+/g;
/** E.164, as every phone number inside reachkit is written. */
const PHONE = /\+\d{7,15}\b/g;
/** The domain of an email address; the regex starts at the `@`, so V8 scans for that character alone. */
const EMAIL_DOMAIN = /@([A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63})/g;
const LOCAL_PART_CHAR = /[^\s@"'<>(),;:]/;
/** RFC 5321's limit on the local part: the walk back from an `@` never goes further. */
const MAX_LOCAL_PART = 64;

/**
 * What a log line may hold of a string: credentials replaced by their prefix,
 * phone numbers cut to their last four digits (`+*****0001`, as privacy
 * requests mask them), email addresses to their first letter and domain.
 * Linear in the length of the text: log lines can hold whatever a client sent.
 */
export function redactLogText(text: string): string {
  if (!/[+@]|rk_/.test(text)) return text;
  return redactEmails(text.replace(CREDENTIAL, "$1_[redacted]").replace(PHONE, (phone) => `+*****${phone.slice(-4)}`));
}

function redactEmails(text: string): string {
  let redacted = "";
  let copiedUpTo = 0;
  for (const match of text.matchAll(EMAIL_DOMAIN)) {
    const at = match.index;
    let localStart = at;
    while (localStart > copiedUpTo && at - localStart < MAX_LOCAL_PART && LOCAL_PART_CHAR.test(text[localStart - 1]!)) localStart--;
    if (localStart === at) continue;
    redacted += `${text.slice(copiedUpTo, localStart + 1)}**@${match[1]}`;
    copiedUpTo = at + match[0].length;
  }
  return copiedUpTo === 0 ? text : redacted + text.slice(copiedUpTo);
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
