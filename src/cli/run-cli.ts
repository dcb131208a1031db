import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Reachkit } from "../kernel/reachkit.ts";
import { CliUsageError, type CliCommand, type CliValues } from "./command.ts";

export interface CliEnvironment {
  commands: readonly CliCommand[];
  /** Builds the kit of a data directory (storage prepared, job runner off). */
  openKit(dataDir: string): Promise<Reachkit>;
  defaultDataDir: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const GLOBAL_OPTIONS = {
  "data-dir": { type: "string", description: "Data directory (database, secret, uploads)", placeholder: "DIR" },
  json: { type: "boolean", description: "Print the result as one JSON value" },
  help: { type: "boolean", description: "Show help" },
} as const;

/** Runs `reachkit <command> [options]`; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: readonly string[], env: CliEnvironment): Promise<number> {
  const words = argv.filter((arg) => !arg.startsWith("-"));
  const command = findCommand(env.commands, argv);
  if (!command) {
    const asked = words.join(" ");
    if (asked && !argv.includes("--help")) env.stderr(`reachkit: unknown command "${asked}"\n\n`);
    env.stdout(generalHelp(env.commands, env.defaultDataDir));
    return asked && !argv.includes("--help") ? 2 : 0;
  }
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
  try {
    for (const [name, option] of Object.entries(command.options ?? {})) {
      if (option.required && (values[name] === undefined || values[name] === "")) throw new CliUsageError(`--${name} is required`);
    }
    const result = await command.run(values, {
      dataDir,
      openKit: async () => (kit ??= await env.openKit(dataDir)),
    });
    env.stdout(values.json ? `${JSON.stringify(result.json, null, 2)}\n` : result.text.endsWith("\n") ? result.text : `${result.text}\n`);
    return 0;
  } catch (error) {
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

function findCommand(commands: readonly CliCommand[], argv: readonly string[]): CliCommand | undefined {
  let best: CliCommand | undefined;
  for (const command of commands) {
    const parts = command.name.split(" ");
    if (parts.every((part, index) => argv[index] === part) && parts.length > (best?.name.split(" ").length ?? 0)) best = command;
  }
  return best;
}

function parseOptions(command: CliCommand, args: readonly string[]): CliValues {
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of Object.entries({ ...GLOBAL_OPTIONS, ...command.options })) {
    options[name] = { type: option.type, ...("multiple" in option && option.multiple ? { multiple: true } : {}) };
  }
  const { values, positionals } = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  if (positionals.length > 0) throw new CliUsageError(`unexpected argument "${positionals[0]}"`);
  return values as CliValues;
}

function optionLines(options: Readonly<Record<string, { description: string; type: string; placeholder?: string; required?: boolean }>>): string[] {
  return Object.entries(options).map(([name, option]) => {
    const flag = option.type === "string" ? `--${name} ${option.placeholder ?? "VALUE"}` : `--${name}`;
    return `  ${flag.padEnd(28)} ${option.description}${option.required ? " (required)" : ""}`;
  });
}

function commandHelp(command: CliCommand): string {
  return [
    `Usage: reachkit ${command.name} [options]`,
    "",
    command.summary,
    "",
    "Options:",
    ...optionLines({ ...command.options, ...GLOBAL_OPTIONS }),
    "",
  ].join("\n");
}

function generalHelp(commands: readonly CliCommand[], defaultDataDir: string): string {
  const width = Math.max(...commands.map((command) => command.name.length)) + 2;
  return [
    "Usage: reachkit <command> [options]",
    "",
    "Commands:",
    ...[...commands].sort((a, b) => a.name.localeCompare(b.name)).map((command) => `  ${command.name.padEnd(width)} ${command.summary}`),
    "",
    "Global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    `The data directory defaults to ${defaultDataDir}. "reachkit <command> --help" shows a command's options.`,
    "",
  ].join("\n");
}
