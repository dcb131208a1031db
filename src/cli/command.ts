import { ACCOUNTS } from "../auth/accounts.ts";
import { HttpError } from "../http/errors.ts";
import type { Reachkit } from "../kernel/reachkit.ts";

export interface CliOption {
  type: "string" | "boolean";
  description: string;
  required?: boolean;
  /** May be repeated; the value is then a list. */
  multiple?: boolean;
  /** Shown in --help as the value placeholder. */
  placeholder?: string;
}

/** `--company ID`, required: the option of every command that works on one company's data. */
export const companyOption: Readonly<Record<"company", CliOption>> = {
  company: { type: "string", description: "Company id", required: true, placeholder: "ID" },
};

/** A positional argument (`reachkit catalog upload FILE`): required, its value under its name in the values. */
export interface CliArgument {
  name: string;
  description: string;
}

export type CliValues = Record<string, string | boolean | string[] | undefined>;

export interface CliContext {
  dataDir: string;
  /** The kit of the data directory, storage ready, jobs not running; closed by the runner afterwards. */
  openKit(): Promise<Reachkit>;
  /**
   * Shows how far a long command is (on standard error): redrawn in place on a
   * terminal, a line per change otherwise. The result still goes to standard output.
   */
  progress(text: string): void;
}

/** What a command returns: the object `--json` prints, and the text printed otherwise. */
export interface CliResult {
  json: unknown;
  text: string;
  /** Default 0. A command that ran but whose outcome is a failure (an upload that failed) says 1. */
  exitCode?: number;
}

/**
 * One `reachkit <name>` command. Core and plugins contribute commands; every
 * command gets `--help` and `--json` from the runner.
 */
export interface CliCommand {
  /** The words after `reachkit`, e.g. "companies create". */
  name: string;
  summary: string;
  options?: Readonly<Record<string, CliOption>>;
  arguments?: readonly CliArgument[];
  run(values: CliValues, context: CliContext): Promise<CliResult>;
}

/** An operator mistake: printed as a one-line error and exit code 2, never a stack trace. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

export function stringOption(values: CliValues, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new CliUsageError(`--${name} takes a value`);
  return value;
}

export function requiredOption(values: CliValues, name: string): string {
  const value = stringOption(values, name);
  if (value === undefined || value === "") throw new CliUsageError(`--${name} is required`);
  return value;
}

export function listOption(values: CliValues, name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [String(value)]).flatMap((item) => item.split(",")).map((item) => item.trim()).filter(Boolean);
}

/** The data directory's kit and the `--company` of a command, which must exist (else the operator's mistake, exit code 2). */
export async function openCompanyKit(values: CliValues, context: CliContext): Promise<{ kit: Reachkit; companyId: string }> {
  const companyId = requiredOption(values, "company");
  const kit = await context.openKit();
  if (!(await kit.resolve(ACCOUNTS).getCompany(companyId))) throw new CliUsageError(`no company ${companyId}`);
  return { kit, companyId };
}

/** Runs a service call for a command: a 400 it answers (an invalid value) becomes one line naming each field, exit code 2. */
export async function refusalsAsUsageErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 400) throw error;
    throw new CliUsageError(error.details.length > 0 ? error.details.map((detail) => `${detail.path}: ${detail.message}`).join("; ") : error.message);
  }
}
