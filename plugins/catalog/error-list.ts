import type { CatalogErrorType, LineProblem } from "./line-check.ts";
import type { CatalogUploadError } from "./records.ts";

/**
 * The errors of one upload: every problem is counted, the first `perType` of
 * each type are kept, so a file of a million bad lines still has a short,
 * useful list and exact counts.
 */
export class ErrorList {
  readonly #kept: CatalogUploadError[] = [];
  readonly #counts: Partial<Record<CatalogErrorType, number>> = {};

  constructor(private readonly perType: number) {}

  add(lineNum: number, problems: readonly LineProblem[]): void {
    for (const { errorType, errorMessage } of problems) {
      const count = (this.#counts[errorType] ?? 0) + 1;
      this.#counts[errorType] = count;
      if (count <= this.perType) this.#kept.push({ errorType, errorMessage, lineNum });
    }
  }

  /** The kept entries in line order (duplicate ids are found a batch later than field errors). */
  entries(): CatalogUploadError[] {
    return [...this.#kept].sort((a, b) => a.lineNum - b.lineNum);
  }

  counts(): Partial<Record<CatalogErrorType, number>> {
    return { ...this.#counts };
  }
}
