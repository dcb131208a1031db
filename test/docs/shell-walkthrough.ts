// Reads a Markdown walkthrough the way a reader runs it: its ```sh blocks, split into the
// commands a shell would run one by one, each with the output the text shows under it.

/** One command of a walkthrough (several lines when continued or quoted), and what the text shows it prints. */
export interface ShownCommand {
  /** The command as written, comments after it left out. */
  command: string;
  /** The `# ...` lines right under it, without their `#`. */
  shown: string[];
  /** The Markdown section it is in. */
  section: string;
  /** The shell variables it reads (outside single quotes). */
  reads: string[];
}

/** The ```sh blocks of every section from `from` up to (not including) `to`, minus the sections in `skip`, as commands. */
export function walkthroughCommands(markdown: string, range: { from: string; to: string; skip: string[] }): ShownCommand[] {
  const commands: ShownCommand[] = [];
  let section = "";
  let inRange = false;
  let block: string[] | undefined;
  for (const line of markdown.split("\n")) {
    if (block === undefined && /^#{2,3} /.test(line)) {
      section = line.replace(/^#+ /, "");
      if (section === range.from) inRange = true;
      if (section === range.to) inRange = false;
      continue;
    }
    if (block === undefined && line === "```sh") {
      block = [];
    } else if (block !== undefined && line === "```") {
      if (inRange && !range.skip.includes(section)) commands.push(...splitCommands(block, section));
      block = undefined;
    } else {
      block?.push(line);
    }
  }
  return commands;
}

/** Splits shell lines into commands: a command ends at a line end outside quotes, `$(...)`, a continuation or a here-document. */
export function splitCommands(lines: string[], section = ""): ShownCommand[] {
  const commands: ShownCommand[] = [];
  let current: string[] = [];
  let lexer = new Lexer();
  let hereDocument: string | undefined;
  /** Comment lines go to the command above them until a blank line. */
  let showing = false;
  for (const line of lines) {
    if (hereDocument !== undefined) {
      current.push(line);
      if (line === hereDocument) {
        hereDocument = undefined;
        finish();
      }
      continue;
    }
    if (current.length === 0 && /^\s*(#|$)/.test(line)) {
      if (line.trim() === "") showing = false;
      else if (showing) commands.at(-1)!.shown.push(line.trim().replace(/^# ?/, ""));
      continue;
    }
    const code = lexer.feed(line);
    current.push(code);
    const opened = /<<-?'?(\w+)'?/.exec(code);
    if (opened) hereDocument = opened[1];
    else if (lexer.atTopLevel() && !code.endsWith("\\")) finish();
  }
  if (current.length > 0) throw new Error(`unfinished shell command in "${section}": ${current.join("\n")}`);
  return commands;

  function finish(): void {
    commands.push({ command: current.join("\n").trimEnd(), shown: [], section, reads: [...lexer.reads] });
    current = [];
    lexer = new Lexer();
    showing = true;
  }
}

/** Enough of the shell's quoting to know where a command ends and where a comment starts. */
class Lexer {
  /** Open contexts, innermost last: "'" single quotes, '"' double quotes, "(" a command substitution. */
  private readonly open: string[] = [];
  readonly reads = new Set<string>();

  atTopLevel(): boolean {
    return this.open.length === 0;
  }

  /** Reads one line; answers it without a trailing comment. */
  feed(line: string): string {
    for (let i = 0; i < line.length; i++) {
      const char = line[i]!;
      const context = this.open.at(-1);
      if (context === "'") {
        if (char === "'") this.open.pop();
      } else if (char === "\\") {
        i++;
      } else if (char === "$" && /[A-Za-z_{]/.test(line[i + 1] ?? "")) {
        this.reads.add(/^\{?(\w+)/.exec(line.slice(i + 1))![1]!);
      } else if (context === '"') {
        if (char === '"') this.open.pop();
        else if (char === "$" && line[i + 1] === "(") this.open.push("("), i++;
      } else if (char === "#" && (i === 0 || /\s/.test(line[i - 1]!))) {
        return line.slice(0, i).trimEnd();
      } else if (char === "'" || char === '"') {
        this.open.push(char);
      } else if (char === "$" && line[i + 1] === "(") {
        this.open.push("(");
        i++;
      } else if (char === ")" && context === "(") {
        this.open.pop();
      }
    }
    return line;
  }
}

/**
 * What a command's shown lines say it prints, when they say it exactly: a JSON value (after an
 * optional status code such as `202 `, wrapped over several lines), or a bare status code (the
 * output of `-w '%{http_code}'`). Undefined when the lines are prose.
 */
export function shownOutput(shown: string[]): string | undefined {
  if (shown.length === 0) return undefined;
  if (/^\d{3}$/.test(shown[0]!)) return shown[0];
  const text = shown.map((line, index) => (index === 0 ? line : line.trimStart())).join("");
  const start = /^(\d{3} )?(?=[{[])/.exec(text);
  if (!start) return undefined;
  return firstJsonValue(text.slice(start[0].length));
}

/** The leading JSON value of a text (braces and brackets balanced outside strings), prose after it left out. */
function firstJsonValue(text: string): string {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === "{" || char === "[") {
      depth++;
    } else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) return text.slice(0, i + 1);
    }
  }
  throw new Error(`the shown JSON never closes: ${text}`);
}

/**
 * Whether an output is what the text shows, where `...` stands for anything, and so does a word
 * it ends (`2b0c...`, `rk_key_...`, `2026-...`: an id or a time shown by its first characters).
 */
export function matchesShown(shown: string, output: string): boolean {
  const pattern = shown
    .split(/[\w-]*\.\.\./)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[\\s\\S]*?");
  return new RegExp(`^${pattern}$`).test(output.trim());
}

/**
 * A shell function that returns once the server on `$PORT` has no job due or running: what a reader
 * waits for before typing the next command. The metrics are read whole before they are searched, never
 * piped into `grep -q`: grep exits at its match, curl then fails to write the rest (exit 23, once they
 * outgrow the pipe) and pipefail takes that for idle while the job runs. A server that does not answer
 * stops the script (under `set -e`) rather than pass for idle.
 */
export const JOBS_IDLE = String.raw`jobs_idle() {
  local metrics
  for (( ; ; )); do
    metrics=$(curl -sSf "localhost:$PORT/metrics")
    grep -qE '^reachkit_jobs\{state="(due|running)"\} [1-9]' <<< "$metrics" || return 0
    sleep 0.05
  done
}
`;
