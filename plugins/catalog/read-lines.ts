/** One line of a file: its bytes, or how long it was when it passed the limit (its bytes were dropped). */
export type RawLine = { lineNum: number; bytes: Buffer; tooLong?: undefined } | { lineNum: number; tooLong: number };

const NEWLINE = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Splits bytes into lines with exact 1-based numbers: LF or CRLF ends, a
 * UTF-8 byte-order mark at the start dropped, a last line without a newline
 * kept. A line longer than `maxLineBytes` is reported with its length and its
 * bytes are dropped as they arrive, so memory stays bounded by the limit.
 *
 * Bytes are not decoded here: a line's UTF-8 is checked on its own, so one
 * bad line is an error on that line and not a corrupted neighbour.
 */
export class LineSplitter {
  #lineNum = 0;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #overflowed = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines that `chunk` completes. */
  push(chunk: Buffer): RawLine[] {
    const lines: RawLine[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      lines.push(this.#finish(chunk.subarray(start, end)));
      start = end + 1;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
    return lines;
  }

  /** The last line, when the input does not end with a newline. */
  end(): RawLine[] {
    return this.#pendingBytes > 0 ? [this.#finish(Buffer.alloc(0))] : [];
  }

  #hold(segment: Buffer): void {
    this.#pendingBytes += segment.length;
    if (this.#overflowed) return;
    if (this.#pendingBytes > this.maxLineBytes) {
      this.#overflowed = true;
      this.#pending = [];
    } else {
      this.#pending.push(segment);
    }
  }

  #finish(segment: Buffer): RawLine {
    const lineNum = ++this.#lineNum;
    const total = this.#pendingBytes + segment.length;
    let line: RawLine;
    if (this.#overflowed || total > this.maxLineBytes) {
      line = { lineNum, tooLong: total };
    } else {
      let bytes = this.#pending.length === 0 ? segment : Buffer.concat([...this.#pending, segment], total);
      if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
      if (lineNum === 1 && bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3);
      line = { lineNum, bytes };
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#overflowed = false;
    return line;
  }
}
