import type { Readable } from "node:stream";
import { LineChecker, type LineProblem } from "./line-check.ts";
import type { CatalogProduct } from "./product-schema.ts";
import { LineSplitter, type RawLine } from "./read-lines.ts";

/** A line of the file, checked. */
export type CheckedLine =
  | { lineNum: number; kind: "product"; product: CatalogProduct }
  | { lineNum: number; kind: "problems"; problems: LineProblem[] }
  | { lineNum: number; kind: "blank" };

/** Checks every line of `file`, in order, streaming; yields the lines of each chunk together (less overhead per line). */
export async function* checkLines(file: Readable, maxLineBytes: number): AsyncGenerator<CheckedLine[]> {
  const splitter = new LineSplitter(maxLineBytes);
  const checker = new LineChecker();
  for await (const chunk of file) {
    const lines = splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
    if (lines.length > 0) yield lines.map((line) => checkLine(line, checker, maxLineBytes));
  }
  yield splitter.end().map((line) => checkLine(line, checker, maxLineBytes));
}

function checkLine(line: RawLine, checker: LineChecker, maxLineBytes: number): CheckedLine {
  if (line.tooLong !== undefined) {
    const problem: LineProblem = { errorType: "LINE_TOO_LONG", errorMessage: `the line is ${line.tooLong} bytes long; at most ${maxLineBytes} are allowed` };
    return { lineNum: line.lineNum, kind: "problems", problems: [problem] };
  }
  return { lineNum: line.lineNum, ...checker.check(line.bytes) };
}
