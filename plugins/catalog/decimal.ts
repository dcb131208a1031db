/**
 * Compares two decimal amounts written as strings ("19.99", "020.5") exactly,
 * without going through binary floating point. Negative, zero or positive.
 */
export function compareDecimals(a: string, b: string): number {
  const [aWhole = "", aFraction = ""] = a.split(".");
  const [bWhole = "", bFraction = ""] = b.split(".");
  const left = aWhole.replace(/^0+/, "");
  const right = bWhole.replace(/^0+/, "");
  if (left.length !== right.length) return left.length - right.length;
  if (left !== right) return left < right ? -1 : 1;
  const width = Math.max(aFraction.length, bFraction.length);
  const leftFraction = aFraction.padEnd(width, "0");
  const rightFraction = bFraction.padEnd(width, "0");
  return leftFraction === rightFraction ? 0 : leftFraction < rightFraction ? -1 : 1;
}
