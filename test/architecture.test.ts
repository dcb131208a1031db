import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";

const root = resolve(import.meta.dirname, "..");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import of a file, as a path relative to the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+["'](\.[^"']+)["']/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(root, resolve(dirname(file), specifier)));
}

/** The package's exports "." and "./testkit": an outside plugin or adapter author has exactly these. */
const PUBLIC_ENTRY_POINTS = ["src/index.ts", "src/testkit/index.ts"];

function violations(area: string, forbidden: (target: string, file: string) => boolean): string[] {
  return sourceFiles(join(root, area)).flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden(target, relative(root, file)))
      .map((target) => `${relative(root, file)} imports ${target}`),
  );
}

describe("dependency rule (docs/architecture.md)", () => {
  it("src imports nothing from adapters or plugins", () => {
    assert.deepEqual(violations("src", (target) => target.startsWith("adapters/") || target.startsWith("plugins/")), []);
  });

  it("adapters never import plugins", () => {
    assert.deepEqual(violations("adapters", (target) => target.startsWith("plugins/")), []);
  });

  it("plugins and adapters import src only through its public entry points, as an outside author does", () => {
    for (const area of ["plugins", "adapters"]) {
      assert.deepEqual(violations(area, (target) => target.startsWith("src/") && !PUBLIC_ENTRY_POINTS.includes(target)), []);
    }
  });

  it("plugins import no adapter, and only the public index of another plugin", () => {
    assert.deepEqual(
      violations("plugins", (target, file) => {
        if (target.startsWith("adapters/")) return true;
        const [, own] = file.split("/");
        const [area, other, ...rest] = target.split("/");
        return area === "plugins" && other !== own && rest.join("/") !== "index.ts";
      }),
      [],
    );
  });
});

/** The port and core types a constructor parameter names when it takes a service. */
const CORE_SERVICES = ["Storage", "Clock", "Jobs", "Outbox", "EventBus", "Logger", "Accounts", "ObjectStorage", "SmsSender", "Scheduler"];

interface PluginClass {
  name: string;
  file: string;
  injectable: boolean;
  /** Constructor parameters without `@inject(TOKEN)`. */
  uninjected: string[];
  /** Every type name the constructor's parameter types mention. */
  parameterTypes: string[];
  /** The constructor and the field initialisers: what runs when the class is made. */
  construction: ts.Node[];
}

const decoratorNamed = (node: ts.HasDecorators, name: string) =>
  (ts.getDecorators(node) ?? []).some((d) => ts.isCallExpression(d.expression) && ts.isIdentifier(d.expression.expression) && d.expression.expression.text === name);

function descendants<T extends ts.Node>(node: ts.Node, keep: (node: ts.Node) => node is T): T[] {
  const found: T[] = [];
  const visit = (child: ts.Node) => {
    if (keep(child)) found.push(child);
    ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

const typeNames = (type: ts.Node | undefined) =>
  (type ? descendants(type, ts.isTypeReferenceNode) : []).flatMap((reference) => (ts.isIdentifier(reference.typeName) ? [reference.typeName.text] : []));

/** The classes made with `new C(...)` under `node`. */
const madeWithNew = (node: ts.Node) => descendants(node, ts.isNewExpression).flatMap((made) => (ts.isIdentifier(made.expression) ? [made.expression.text] : []));

const pluginFiles = sourceFiles(join(root, "plugins")).map((file) => ({
  file: relative(root, file),
  source: ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true),
}));

const pluginClasses = new Map<string, PluginClass>(
  pluginFiles.flatMap(({ file, source }) =>
    descendants(source, ts.isClassDeclaration).map((declaration) => {
      const constructor = declaration.members.find(ts.isConstructorDeclaration);
      const parameters = constructor?.parameters ?? [];
      const fields = declaration.members.filter(ts.isPropertyDeclaration).flatMap((field) => field.initializer ?? []);
      const entry: PluginClass = {
        name: declaration.name!.text,
        file,
        injectable: decoratorNamed(declaration, "injectable"),
        uninjected: parameters.filter((parameter) => !decoratorNamed(parameter, "inject")).map((parameter) => parameter.name.getText()),
        parameterTypes: parameters.flatMap((parameter) => typeNames(parameter.type)),
        construction: [...(constructor?.body ? [constructor.body] : []), ...fields],
      };
      return [entry.name, entry] as const;
    }),
  ),
);

const serviceTypes = new Set([...CORE_SERVICES, ...[...pluginClasses.values()].filter((c) => c.injectable).map((c) => c.name)]);
/** A class that takes a service lives as long as its service: the container builds it. */
const takesService = (name: string) => pluginClasses.get(name)?.parameterTypes.some((type) => serviceTypes.has(type)) ?? false;

describe("services are built by the container (docs/architecture.md)", () => {
  it("binds every plugin service with useClass, on a class with @injectable() and @inject(TOKEN) on every constructor parameter", () => {
    const problems: string[] = [];
    for (const { file, source } of pluginFiles) {
      for (const call of descendants(source, ts.isCallExpression)) {
        const binding = call.arguments[1];
        if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== "bind" || !binding || !ts.isObjectLiteralExpression(binding)) continue;
        for (const property of binding.properties) {
          if (!ts.isPropertyAssignment(property)) continue;
          const kind = property.name.getText();
          if (kind === "useClass") {
            const bound = property.initializer.getText();
            if (!pluginClasses.get(bound)?.injectable) problems.push(`${file}: ${bound} is bound with useClass but is not an @injectable() plugin class`);
          } else if (madeWithNew(property.initializer).length > 0) {
            problems.push(`${file}: a ${kind} binding builds ${madeWithNew(property.initializer).join(", ")} by hand`);
          }
        }
      }
    }
    for (const plugin of pluginClasses.values()) {
      if (plugin.injectable && plugin.uninjected.length > 0) problems.push(`${plugin.file}: ${plugin.name}'s parameters ${plugin.uninjected.join(", ")} lack @inject(TOKEN)`);
    }
    assert.deepEqual(problems, []);
  });

  it("never builds a service by hand: no `new` of an injectable class, and no service builds a collaborator that takes a service", () => {
    const problems: string[] = [];
    for (const { file, source } of pluginFiles) {
      for (const name of madeWithNew(source)) if (pluginClasses.get(name)?.injectable) problems.push(`${file}: new ${name}`);
    }
    for (const plugin of pluginClasses.values()) {
      for (const name of plugin.construction.flatMap(madeWithNew)) {
        if (takesService(name)) problems.push(`${plugin.file}: ${plugin.name} builds its own ${name}; inject it`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
