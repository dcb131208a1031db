import type { Readable } from "node:stream";
import { LineChecker, type LineProblem } from "./line-check.ts";
import type { CatalogProduct } from "./product-schema.ts";
import { LineSplitter, type RawLine } from "./read-lines.ts";

/** A line of the file, checked. */
export type CheckedLine =
  | { lineNum: number; kind: "product"; product: CatalogProduct; json?: string }
  | { lineNum: number; kind: "problems"; problems: LineProblem[] }
  | { lineNum: number; kind: "blank" };

/**
 * The lines of `file`, in order, streaming: the lines of each chunk come
 * together, and each is checked only when it is taken. So one checked
 * product exists at a time before the caller keeps it, and products die
 * young (they are not promoted to the old generation, which kept memory
 * from growing with the file in measurements).
 */
export async function* checkLines(file: Readable, maxLineBytes: number): AsyncGenerator<Iterable<CheckedLine>> {
  const splitter = new LineSplitter(maxLineBytes);
  const checker = new LineChecker();
  function* checked(lines: readonly RawLine[]): Generator<CheckedLine> {
    for (const line of lines) yield checkLine(line, checker, maxLineBytes);
  }
  for await (const chunk of file) yield checked(splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer)));
  yield checked(splitter.end());
}

function checkLine(line: RawLine, checker: LineChecker, maxLineBytes: number): CheckedLine {
  if (line.tooLong !== undefined) {
    const problem: LineProblem = { errorType: "LINE_TOO_LONG", errorMessage: `the line is ${line.tooLong} bytes long; at most ${maxLineBytes} are allowed` };
    return { lineNum: line.lineNum, kind: "problems", problems: [problem] };
  }
  return { lineNum: line.lineNum, ...checker.check(line.bytes) };
}
