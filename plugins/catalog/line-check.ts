import { isUtf8 } from "node:buffer";
import { jsonlParser } from "stream-json/jsonl/parser.js";
import * as v from "valibot";
import { isJsonText } from "./json-syntax.ts";
import { createFieldChecks, createProductSchema, type CatalogProduct } from "./product-schema.ts";
import { createQuickCheck } from "./quick-check.ts";

/**
 * The `errorType` values of upload errors (wire-compat.md), plus reachkit's
 * SAVE_FAILED for a failed save and NO_PRODUCTS for a file given up because
 * its first lines hold no product.
 */
export const CATALOG_ERROR_TYPES = [
  "INVALID_JSON",
  "MISSING_FIELD",
  "INVALID_TYPE",
  "INVALID_VALUE",
  "TOO_LONG",
  "TOO_MANY",
  "DUPLICATE_ID",
  "LINE_TOO_LONG",
  "SAVE_FAILED",
  "NO_PRODUCTS",
] as const;
export type CatalogErrorType = (typeof CATALOG_ERROR_TYPES)[number];

/** One problem found on a line; the caller adds the line number. */
export interface LineProblem {
  errorType: CatalogErrorType;
  errorMessage: string;
}

export type LineOutcome =
  /** `json` is the line's text when it is the product as is (no unknown field to drop). */
  | { kind: "product"; product: CatalogProduct; json?: string }
  | { kind: "problems"; problems: LineProblem[] }
  /** Nothing but white space: skipped, not an error. */
  | { kind: "blank" };

/** What stream-json's parser hands back for a line that is not JSON. */
class NotJson {
  constructor(readonly message: string) {}
}

/**
 * Checks one line of a catalog file: UTF-8, JSON, an object, every field rule
 * of interface §2.7, and the rules across fields of one product. Lines are
 * parsed by stream-json's JSONL line parser; LineSplitter (read-lines.ts) cuts
 * the stream into lines first, keeping line numbers exact.
 */
export class LineChecker {
  readonly #parse = jsonlParser({ errorIndicator: (error: Error) => new NotJson(error.message) });
  readonly #checks = createFieldChecks();
  readonly #schema = createProductSchema(this.#checks);
  readonly #quickCheck = createQuickCheck(this.#checks);
  #parseFailures = 0;

  /**
   * @param messagesKept INVALID_JSON entries an upload keeps (errorsPerType).
   * Once that many lines failed to parse, lines are screened by isJsonText
   * before JSON.parse: a line it refuses is INVALID_JSON without JSON.parse's
   * own message, which no upload would keep any more.
   */
  constructor(private readonly messagesKept: number) {}

  check(bytes: Buffer): LineOutcome {
    if (!isUtf8(bytes)) return problem("INVALID_JSON", "the line is not valid UTF-8");
    const text = bytes.toString("utf8");
    if (text.trim() === "") return { kind: "blank" };
    if (this.#parseFailures >= this.messagesKept && !isJsonText(text)) return problem("INVALID_JSON", "the line is not valid JSON");
    const parsed = this.#parse(text);
    const value = typeof parsed === "object" ? parsed.value : undefined;
    if (value instanceof NotJson) {
      this.#parseFailures++;
      return problem("INVALID_JSON", `the line is not valid JSON: ${value.message}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return problem("INVALID_TYPE", `a line must be a JSON object (one product), not ${kindOf(value)}`);
    }
    let product = this.#quickCheck(value as Record<string, unknown>);
    const json = product === value ? text : undefined;
    if (product === undefined) {
      const result = v.safeParse(this.#schema, value, { abortEarly: false });
      if (!result.success) return { kind: "problems", problems: describeIssues(result.issues) };
      product = result.output;
    }
    const crossProblems = checkAcrossFields(product);
    return crossProblems.length > 0 ? { kind: "problems", problems: crossProblems } : { kind: "product", product, json };
  }
}

function problem(errorType: CatalogErrorType, errorMessage: string): LineOutcome {
  return { kind: "problems", problems: [{ errorType, errorMessage }] };
}

/** Variant ids unique within the product; image variantIds naming variants of this product. */
function checkAcrossFields(product: CatalogProduct): LineProblem[] {
  const problems: LineProblem[] = [];
  const variantIndex = new Map<string, number>();
  product.variants.forEach((variant, index) => {
    const first = variantIndex.get(variant.id);
    if (first === undefined) variantIndex.set(variant.id, index);
    else problems.push({ errorType: "DUPLICATE_ID", errorMessage: `variants[${index}].id ${quote(variant.id)} repeats variants[${first}].id` });
  });
  product.images?.forEach((image, index) => {
    image.variantIds?.forEach((variantId, position) => {
      if (!variantIndex.has(variantId)) {
        problems.push({
          errorType: "INVALID_VALUE",
          errorMessage: `images[${index}].variantIds[${position}] ${quote(variantId)} is not the id of a variant of this product`,
        });
      }
    });
  });
  return problems;
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  boolean: "true or false",
  array: "an array",
  object: "an object",
};

/** valibot's issues as upload errors, one per problem. */
function describeIssues(issues: readonly v.BaseIssue<unknown>[]): LineProblem[] {
  const problems: LineProblem[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const problem = describeIssue(issue);
    const key = `${problem.errorType}\u0000${problem.errorMessage}`;
    if (!seen.has(key)) problems.push(problem);
    seen.add(key);
  }
  return problems;
}

/** A valibot issue as an upload error: the field path, and what is wrong in plain words. */
function describeIssue(issue: v.BaseIssue<unknown>): LineProblem {
  const path = issue.path ?? [];
  const field = pathText(path);
  const input = issue.input;
  switch (issue.type) {
    case "object": {
      const last = path.at(-1);
      if (last?.origin !== "key") return { errorType: "INVALID_TYPE", errorMessage: `${field} must be an object, not ${kindOf(input)}` };
      // valibot's object takes an array and misses every key of it: one wrong type, not N missing fields.
      if (Array.isArray(last.input)) return { errorType: "INVALID_TYPE", errorMessage: `${pathText(path.slice(0, -1))} must be an object, not an array` };
      return { errorType: "MISSING_FIELD", errorMessage: `${field} is required` };
    }
    case "string":
    case "number":
    case "boolean":
    case "array":
      return { errorType: "INVALID_TYPE", errorMessage: `${field} must be ${EXPECTED[issue.type]}, not ${kindOf(input)}` };
    case "max_length": {
      const length = (input as { length: number }).length;
      return Array.isArray(input)
        ? { errorType: "TOO_MANY", errorMessage: `${field} has ${length} entries; at most ${String(issue.requirement)} are allowed` }
        : { errorType: "TOO_LONG", errorMessage: `${field} is ${length} characters long; at most ${String(issue.requirement)} are allowed` };
    }
    default:
      // Checks whose message was written for them: min_length, min_value, integer, check.
      return { errorType: "INVALID_VALUE", errorMessage: `${field} ${issue.message}` };
  }
}

/** `variants[0].prices[1].currencyCode` */
function pathText(path: readonly v.IssuePathItem[]): string {
  let text = "";
  for (const item of path) {
    const key = item.key as string | number;
    text += typeof key === "number" ? `[${key}]` : text === "" ? key : `.${key}`;
  }
  return text;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return "a string";
  if (typeof value === "boolean") return value ? "true" : "false";
  return `a ${typeof value}`;
}

/** A value quoted for a message, cut short so a huge field never floods the error list. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}
