/**
 * Whether `text` is one JSON value (RFC 8259, what JSON.parse accepts),
 * found without parsing it and without an exception.
 *
 * Each line JSON.parse refuses costs a thrown SyntaxError, about 5 to 10 µs,
 * and memory outside the JavaScript heap that only a full garbage collection
 * returns: 10 million lines that were not JSON took 100 s and 400 MB more.
 * A file that has shown many such lines has them screened here first.
 * Iterative, like JSON.parse: no nesting depth overflows it.
 */
export function isJsonText(text: string): boolean {
  /** The open containers, innermost last: OPEN_OBJECT or OPEN_ARRAY. */
  const open: number[] = [];
  let i = 0;
  for (;;) {
    // A value starts at i.
    i = skipSpace(text, i);
    const first = text.charCodeAt(i);
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) === closing(first)) i++;
      else {
        open.push(first);
        if (first === OPEN_OBJECT && (i = afterKey(text, i)) < 0) return false;
        continue;
      }
    } else if ((i = scalarEnd(text, i)) < 0) return false;
    // A value ended at i: a comma, or the ends of the containers it closes.
    for (;;) {
      i = skipSpace(text, i);
      const container = open.at(-1);
      if (container === undefined) return i === text.length;
      const next = text.charCodeAt(i);
      if (next === COMMA) {
        i++;
        if (container === OPEN_OBJECT && (i = afterKey(text, skipSpace(text, i))) < 0) return false;
        break;
      }
      if (next !== closing(container)) return false;
      open.pop();
      i++;
    }
  }
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const closing = (container: number) => (container === OPEN_OBJECT ? 0x7d : 0x5d);
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
const isHexDigit = (code: number) => isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);

function skipSpace(text: string, i: number): number {
  for (let code = text.charCodeAt(i); code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09; code = text.charCodeAt(i)) i++;
  return i;
}

/** A member's key, white space and colon from `i`: the index after the colon, or -1. */
function afterKey(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE || (i = stringEnd(text, i)) < 0) return -1;
  i = skipSpace(text, i);
  return text.charCodeAt(i) === 0x3a ? i + 1 : -1;
}

/** The end of the string, number or literal at `i`, or -1. */
function scalarEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return stringEnd(text, i);
  if (first === 0x2d || isDigit(first)) return numberEnd(text, i);
  for (const literal of LITERALS) if (text.startsWith(literal, i)) return i + literal.length;
  return -1;
}

const LITERALS = ["true", "false", "null"];

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i + 1;
    if (code < 0x20) return -1;
    if (code !== BACKSLASH) i++;
    else {
      const escaped = text.charCodeAt(i + 1);
      if (escaped === 0x75) {
        for (let digit = i + 2; digit < i + 6; digit++) if (!isHexDigit(text.charCodeAt(digit))) return -1;
        i += 6;
      } else if (SIMPLE_ESCAPES.has(escaped)) i += 2;
      else return -1;
    }
  }
  return -1;
}

/** `"` `\` `/` `b` `f` `n` `r` `t` */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
function numberEnd(text: string, i: number): number {
  if (text.charCodeAt(i) === 0x2d) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else if (isDigit(text.charCodeAt(i))) i = digitsEnd(text, i);
  else return -1;
  if (text.charCodeAt(i) === 0x2e) {
    if (!isDigit(text.charCodeAt(i + 1))) return -1;
    i = digitsEnd(text, i + 1);
  }
  const exponent = text.charCodeAt(i);
  if (exponent === 0x65 || exponent === 0x45) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === 0x2b || sign === 0x2d) i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    i = digitsEnd(text, i);
  }
  return i;
}

function digitsEnd(text: string, i: number): number {
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}
