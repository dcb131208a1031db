import Database from "better-sqlite3";

/**
 * Runs `work`, calling `watch` with every SQLite statement executed meanwhile (in this process, on any
 * connection) and its arguments, just before the statement runs.
 */
export async function watchStatements(work: () => Promise<unknown>, watch: (statement: Database.Statement, args: unknown[]) => void): Promise<void> {
  type Execute = (this: Database.Statement, ...args: unknown[]) => unknown;
  const prototype = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<"run" | "get" | "all" | "iterate", Execute>;
  const originals = { run: prototype.run, get: prototype.get, all: prototype.all, iterate: prototype.iterate };
  for (const method of ["run", "get", "all", "iterate"] as const) {
    prototype[method] = function (this: Database.Statement, ...args: unknown[]) {
      watch(this, args);
      return originals[method].apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    Object.assign(prototype, originals);
  }
}

/** The SQL text of every SQLite statement that `work` executes (in this process, on any connection). */
export async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const executed: string[] = [];
  await watchStatements(work, (statement) => executed.push(statement.source.trim()));
  return executed;
}
