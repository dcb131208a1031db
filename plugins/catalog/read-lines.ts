import type { Readable } from "node:stream";

/** One line of a file: its bytes, or how long it was when it passed the limit (its bytes were dropped). */
export type RawLine = { lineNum: number; bytes: Buffer; tooLong?: undefined } | { lineNum: number; tooLong: number };

const NEWLINE = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Splits a byte stream into lines with exact 1-based numbers: LF or CRLF ends,
 * a UTF-8 byte-order mark at the start dropped, a last line without a newline
 * kept. A line longer than `maxLineBytes` is reported with its length and its
 * bytes are dropped as they arrive, so memory stays bounded by the limit.
 * Yields the lines of each chunk together, to keep per-line overhead low.
 *
 * Bytes are not decoded here: a line's UTF-8 is checked on its own, so one
 * bad line is an error on that line and not a corrupted neighbour.
 */
export async function* readLines(stream: Readable, maxLineBytes: number): AsyncGenerator<RawLine[]> {
  let lineNum = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overflowed = false;

  const hold = (segment: Buffer) => {
    pendingBytes += segment.length;
    if (overflowed) return;
    if (pendingBytes > maxLineBytes) {
      overflowed = true;
      pending = [];
    } else {
      pending.push(segment);
    }
  };

  const finish = (segment: Buffer): RawLine => {
    lineNum++;
    const total = pendingBytes + segment.length;
    let line: RawLine;
    if (overflowed || total > maxLineBytes) {
      line = { lineNum, tooLong: total };
    } else {
      let bytes = pending.length === 0 ? segment : Buffer.concat([...pending, segment], total);
      if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
      if (lineNum === 1 && bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3);
      line = { lineNum, bytes };
    }
    pending = [];
    pendingBytes = 0;
    overflowed = false;
    return line;
  };

  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    const lines: RawLine[] = [];
    let start = 0;
    for (let end = buffer.indexOf(NEWLINE); end !== -1; end = buffer.indexOf(NEWLINE, start)) {
      lines.push(finish(buffer.subarray(start, end)));
      start = end + 1;
    }
    if (start < buffer.length) hold(buffer.subarray(start));
    if (lines.length > 0) yield lines;
  }
  if (pendingBytes > 0) yield [finish(Buffer.alloc(0))];
}
