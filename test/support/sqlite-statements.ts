import Database from "better-sqlite3";

/** The SQL text of every SQLite statement that `work` executes (in this process, on any connection). */
export async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  type Execute = (this: Database.Statement, ...args: unknown[]) => unknown;
  const prototype = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<"run" | "get" | "all" | "iterate", Execute>;
  const originals = { run: prototype.run, get: prototype.get, all: prototype.all, iterate: prototype.iterate };
  const executed: string[] = [];
  for (const method of ["run", "get", "all", "iterate"] as const) {
    prototype[method] = function (this: Database.Statement, ...args: unknown[]) {
      executed.push(this.source.trim());
      return originals[method].apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    Object.assign(prototype, originals);
  }
  return executed;
}
