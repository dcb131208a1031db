import type { Readable } from "node:stream";
import { LineChecker, type LineProblem } from "./line-check.ts";
import type { CatalogProduct } from "./product-schema.ts";
import { LineSplitter, type RawLine } from "./read-lines.ts";
import type { CatalogSettings } from "./settings.ts";

/** A line of the file, checked; blank lines come in runs (`lineNum` is the first, `count` how many). */
export type CheckedLine =
  | { lineNum: number; kind: "product"; product: CatalogProduct; json?: string }
  | { lineNum: number; kind: "problems"; problems: LineProblem[] }
  | { lineNum: number; kind: "blank"; count: number };

/**
 * The lines of `file`, in order, streaming: the lines of each chunk come
 * together, and each is split and checked only when it is taken. So one
 * checked product exists at a time before the caller keeps it, and products
 * die young (they are not promoted to the old generation, which kept memory
 * from growing with the file in measurements).
 */
export async function* checkLines(file: Readable, { maxLineBytes, errorsPerType }: Pick<CatalogSettings, "maxLineBytes" | "errorsPerType">): AsyncGenerator<Iterable<CheckedLine>> {
  const splitter = new LineSplitter(maxLineBytes);
  const checker = new LineChecker(errorsPerType);
  function* checked(lines: Iterable<RawLine>): Generator<CheckedLine> {
    for (const line of lines) yield checkLine(line, checker, maxLineBytes);
  }
  for await (const chunk of file) yield checked(splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer)));
  yield checked(splitter.end());
}

function checkLine(line: RawLine, checker: LineChecker, maxLineBytes: number): CheckedLine {
  const { lineNum } = line;
  switch (line.kind) {
    case "empty":
      return { lineNum, kind: "blank", count: line.count };
    case "too long": {
      const problem: LineProblem = { errorType: "LINE_TOO_LONG", errorMessage: `the line is ${line.length} bytes long; at most ${maxLineBytes} are allowed` };
      return { lineNum, kind: "problems", problems: [problem] };
    }
    case "bytes": {
      const outcome = checker.check(line.bytes);
      return outcome.kind === "blank" ? { lineNum, kind: "blank", count: 1 } : { lineNum, ...outcome };
    }
  }
}
