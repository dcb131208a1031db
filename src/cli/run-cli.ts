import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Reachkit } from "../kernel/reachkit.ts";
import { CliUsageError, type CliCommand, type CliOption, type CliValues } from "./command.ts";
import { withIsoTimes } from "./format.ts";

export interface CliEnvironment {
  commands: readonly CliCommand[];
  /** Builds the kit of a data directory (storage prepared, job runner off). */
  openKit(dataDir: string): Promise<Reachkit>;
  defaultDataDir: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Standard error is a terminal: progress is redrawn in place there. */
  interactive?: boolean;
}

const GLOBAL_OPTIONS = {
  "data-dir": { type: "string", description: "Data directory (database, secret, uploads)", placeholder: "DIR" },
  json: { type: "boolean", description: "Print the result as one JSON value" },
  help: { type: "boolean", description: "Show help" },
} as const satisfies Record<string, CliOption>;

/** Runs `reachkit <command> [options]`; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: readonly string[], env: CliEnvironment): Promise<number> {
  const command = findCommand(env.commands, argv);
  if (!command) return helpForWords(argv, env);
  const rest = argv.slice(command.name.split(" ").length);
  let values: CliValues;
  try {
    values = parseOptions(command, rest);
  } catch (error) {
    env.stderr(`reachkit ${command.name}: ${(error as Error).message}\n`);
    env.stderr(`Run "reachkit ${command.name} --help" for its options.\n`);
    return 2;
  }
  if (values.help) {
    env.stdout(commandHelp(command));
    return 0;
  }
  const dataDir = typeof values["data-dir"] === "string" ? values["data-dir"] : env.defaultDataDir;
  let kit: Reachkit | undefined;
  const progress = progressLine(env);
  try {
    for (const [name, option] of Object.entries(command.options ?? {})) {
      if (option.required && (values[name] === undefined || values[name] === "")) throw new CliUsageError(`--${name} is required`);
    }
    const result = await command.run(values, {
      dataDir,
      openKit: async () => (kit ??= await env.openKit(dataDir)),
      progress: progress.show,
    });
    progress.end();
    env.stdout(values.json ? `${JSON.stringify(withIsoTimes(result.json), null, 2)}\n` : result.text.endsWith("\n") ? result.text : `${result.text}\n`);
    return result.exitCode ?? 0;
  } catch (error) {
    progress.end();
    if (error instanceof CliUsageError) {
      env.stderr(`reachkit ${command.name}: ${error.message}\n`);
      return 2;
    }
    env.stderr(`reachkit ${command.name} failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await kit?.stop();
  }
}

/** Redrawn in place on a terminal; elsewhere (a log, a pipe) one line per change. */
function progressLine(env: CliEnvironment): { show(text: string): void; end(): void } {
  let last: string | undefined;
  return {
    show(text) {
      if (text === last) return;
      env.stderr(env.interactive ? `\r\x1b[2K${text}` : `${text}\n`);
      last = text;
    },
    end() {
      if (env.interactive && last !== undefined) env.stderr("\n");
      last = undefined;
    },
  };
}

/**
 * No command matched: a group's sub-commands (`reachkit catalog`), the general
 * help (`reachkit`, `reachkit --help`), or a usage error naming what is unknown.
 */
function helpForWords(argv: readonly string[], env: CliEnvironment): number {
  const firstOption = argv.findIndex((arg) => arg.startsWith("-"));
  const words = firstOption === -1 ? [...argv] : argv.slice(0, firstOption);
  const options = argv.slice(words.length);
  const unknownOption = options.find((arg) => arg.startsWith("-") && !Object.hasOwn(GLOBAL_OPTIONS, arg.replace(/^--?/, "").split("=")[0]!));
  // The longest leading words that name a group of commands.
  let groupWords = words;
  while (groupWords.length > 0 && subCommands(env.commands, groupWords).length === 0) groupWords = groupWords.slice(0, -1);
  const group = groupWords.join(" ");
  const help = group ? groupHelp(group, subCommands(env.commands, groupWords)) : generalHelp(env.commands, env.defaultDataDir);
  const asked = words.join(" ");
  if (asked !== group) {
    env.stderr(`reachkit: unknown command "${asked}"\n\n`);
    env.stdout(help);
    return 2;
  }
  if (unknownOption !== undefined) {
    env.stderr(`reachkit${group ? ` ${group}` : ""}: unknown option ${unknownOption.split("=")[0]}\n\n`);
    env.stdout(help);
    return 2;
  }
  env.stdout(help);
  return 0;
}

const subCommands = (commands: readonly CliCommand[], words: readonly string[]) => commands.filter((command) => command.name.startsWith(`${words.join(" ")} `));

function findCommand(commands: readonly CliCommand[], argv: readonly string[]): CliCommand | undefined {
  let best: CliCommand | undefined;
  for (const command of commands) {
    const parts = command.name.split(" ");
    if (parts.every((part, index) => argv[index] === part) && parts.length > (best?.name.split(" ").length ?? 0)) best = command;
  }
  return best;
}

function parseOptions(command: CliCommand, args: readonly string[]): CliValues {
  const declared: Record<string, CliOption> = { ...GLOBAL_OPTIONS, ...command.options };
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of Object.entries(declared)) {
    options[name] = { type: option.type, ...(option.multiple ? { multiple: true } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CliUsageError(optionErrorMessage(error as Error & { code?: string }, declared));
  }
  const values = parsed.values as CliValues;
  const expected = command.arguments ?? [];
  if (parsed.positionals.length > expected.length) throw new CliUsageError(`unexpected argument "${parsed.positionals[expected.length]}"`);
  if (!values.help) {
    for (const [index, argument] of expected.entries()) {
      const value = parsed.positionals[index];
      if (value === undefined) throw new CliUsageError(`${argument.name} is required (${argument.description})`);
      values[argument.name.toLowerCase()] = value;
    }
  }
  return values;
}

/** reachkit's words for what node:util's parseArgs refused. */
function optionErrorMessage(error: Error & { code?: string }, declared: Readonly<Record<string, CliOption>>): string {
  const flag = /'(-[^' ]+)/.exec(error.message)?.[1] ?? "";
  const option = declared[flag.replace(/^--?/, "")];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${flag}`;
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
    return option.type === "boolean" ? `${flag} takes no value` : `${flag} needs a value (${flag} ${option.placeholder ?? "VALUE"})`;
  }
  return error.message;
}

function optionLines(options: Readonly<Record<string, CliOption>>): string[] {
  return Object.entries(options).map(([name, option]) => {
    const flag = option.type === "string" ? `--${name} ${option.placeholder ?? "VALUE"}` : `--${name}`;
    return `  ${flag.padEnd(28)} ${option.description}${option.required ? " (required)" : ""}`;
  });
}

function commandHelp(command: CliCommand): string {
  const argumentsOf = command.arguments ?? [];
  return [
    `Usage: reachkit ${[command.name, ...argumentsOf.map((argument) => argument.name)].join(" ")} [options]`,
    "",
    command.summary,
    "",
    ...(argumentsOf.length > 0 ? ["Arguments:", ...argumentsOf.map((argument) => `  ${argument.name.padEnd(28)} ${argument.description}`), ""] : []),
    "Options:",
    ...optionLines({ ...command.options, ...GLOBAL_OPTIONS }),
    "",
  ].join("\n");
}

function commandList(commands: readonly CliCommand[]): string[] {
  const width = Math.max(...commands.map((command) => command.name.length)) + 2;
  return [...commands].sort((a, b) => a.name.localeCompare(b.name)).map((command) => `  ${command.name.padEnd(width)} ${command.summary}`);
}

function groupHelp(group: string, commands: readonly CliCommand[]): string {
  return [`Usage: reachkit ${group} <command> [options]`, "", "Commands:", ...commandList(commands), "", `"reachkit ${group} <command> --help" shows a command's options.`, ""].join("\n");
}

function generalHelp(commands: readonly CliCommand[], defaultDataDir: string): string {
  return [
    "Usage: reachkit <command> [options]",
    "",
    "Commands:",
    ...commandList(commands),
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    `The data directory defaults to ${defaultDataDir}. "reachkit <command> --help" shows a command's options.`,
    "",
  ].join("\n");
}
