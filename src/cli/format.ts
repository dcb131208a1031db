/** Records keep times as epoch milliseconds in fields named `at` or `...At`; the CLI prints them in ISO 8601. */
const isTimeField = (key: string, value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && /^at$|At$/.test(key);

/** A command's JSON result with every time field (`createdAt`, `at`...) in ISO 8601, at any depth. */
export function withIsoTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withIsoTimes);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, isTimeField(key, field) ? new Date(field).toISOString() : withIsoTimes(field)]));
}

/** `key: value` lines for an object (times in ISO 8601); arrays of objects become indented rows. */
export function formatFields(fields: Record<string, unknown>): string {
  fields = withIsoTimes(fields) as Record<string, unknown>;
  const width = Math.max(0, ...Object.keys(fields).map((key) => key.length)) + 1;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) {
      lines.push(`${`${key}:`.padEnd(width)}`);
      for (const item of value) lines.push(`  - ${typeof item === "object" && item !== null ? Object.values(item).join("  ") : String(item)}`);
    } else {
      lines.push(`${`${key}:`.padEnd(width)} ${typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)}`);
    }
  }
  return lines.join("\n");
}

/** A plain text table with a header row; "(none)" when empty. */
export function formatTable(rows: readonly Record<string, string | number>[]): string {
  if (rows.length === 0) return "(none)";
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => String(row[column] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, index) => cell.padEnd(widths[index]!)).join("  ").trimEnd();
  return [line(columns), ...rows.map((row) => line(columns.map((column) => String(row[column] ?? ""))))].join("\n");
}
