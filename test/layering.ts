import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The layering rule, as data: what each top-level folder of product code may
 * import. Pure logic sits at the bottom (`shared`), the worker at the top;
 * the clients never reach into the server. Type-only imports count too: a
 * type import upward is how an upward value import starts.
 */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  shared: [],
  "storage-adapters": ["shared"],
  // The memory tool's commands over a file interface: pure, reused by the worker and the SDK.
  "memory-tool": ["shared"],
  "durable-objects": ["shared", "storage-adapters"],
  // The Node side of the disk backend speaks the adapter's protocol.
  "disk-host": ["shared", "storage-adapters"],
  worker: ["shared", "storage-adapters", "durable-objects", "memory-tool"],
  clients: ["shared", "memory-tool"],
  // `capvault serve` starts the launcher.
  cli: ["shared", "clients", "launcher"],
  launcher: ["shared", "disk-host"],
  // Examples use the vault as its users do: through the clients (and what those bring of shared).
  examples: ["clients", "shared"],
};

/** Folders whose files may import anything: they test, measure or drive the product. */
const HARNESS = new Set(["test", "bench", "reliability", "packages"]);

export interface Import {
  /** The importing file, relative to the repository. */
  from: string;
  /** The imported file, relative to the repository. */
  to: string;
  typeOnly: boolean;
}

export interface Violation {
  kind: "upward" | "cycle";
  /** `a.ts -> b.ts` for an upward import; the files of the cycle for a cycle. */
  detail: string;
}

const parsed = new Map<string, Import[]>();

/** Every relative import of `source` (import, export-from, dynamic import, import type), resolved against `file`. */
export function importsOf(file: string, source: string): Import[] {
  const key = `${file}\0${source}`;
  const known = parsed.get(key);
  if (known) return known;
  const found: Import[] = [];
  parsed.set(key, found);
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith(".")) return;
    found.push({
      from: file,
      to: path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)),
      typeOnly,
    });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const allNamedTypes =
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((e) => e.isTypeOnly) &&
        clause?.name === undefined;
      add(node.moduleSpecifier.text, clause?.isTypeOnly === true || allNamedTypes);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) add(literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return found;
}

const isTestFile = (file: string) => /\.test\.ts$/.test(file);

/**
 * The rule's breaches among `files` (repository-relative path to source):
 * an import from a product file into a folder its folder may not import
 * (a test beside its code is harness, as `test/` is, so only its cycles
 * count), and a cycle of value imports between files, whatever their folders.
 */
export function checkLayering(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  const valueEdges = new Map<string, string[]>();
  for (const [file, source] of files) {
    const folder = file.split("/")[0]!;
    for (const imp of importsOf(file, source)) {
      const target = imp.to.split("/")[0]!;
      const allowed = MAY_IMPORT[folder];
      if (allowed && !isTestFile(file) && target !== folder && !allowed.includes(target)) {
        violations.push({ kind: "upward", detail: `${file} -> ${imp.to}${imp.typeOnly ? " (type-only)" : ""}` });
      }
      if (!imp.typeOnly && files.has(imp.to)) valueEdges.set(file, [...(valueEdges.get(file) ?? []), imp.to]);
    }
  }
  for (const cycle of valueCycles(valueEdges)) violations.push({ kind: "cycle", detail: cycle.join(" -> ") });
  return violations;
}

/**
 * Cycles between files counting type-only imports too (tests beside code
 * and the harness aside): each a sorted list of the files involved.
 */
export function typeCycles(files: ReadonlyMap<string, string>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, source] of files) {
    if (isTestFile(file) || HARNESS.has(file.split("/")[0]!)) continue;
    for (const imp of importsOf(file, source))
      if (files.has(imp.to)) edges.set(file, [...(edges.get(file) ?? []), imp.to]);
  }
  return valueCycles(edges);
}

/** One cycle per strongly connected component of more than one file (Tarjan's algorithm, iterative). */
function valueCycles(edges: ReadonlyMap<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.child < targets.length) {
        const to = targets[frame.child++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, child: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) components.push(component.sort());
      }
    }
  }
  return components;
}

// Gitignored scratch and build folders (.gitignore) hold no source of the project.
const SKIP = new Set(["node_modules", ".git", ".wrangler", ".capvault", "dist", "vault-data", "tmp", ".venv"]);

/** Every TypeScript source file under `root` (declaration files and generated bundles aside). */
export function repositorySources(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (SKIP.has(entry.name)) continue;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (rel.endsWith(".ts") && !rel.endsWith(".d.ts"))
        files.set(rel, fs.readFileSync(path.join(root, rel), "utf8"));
    }
  };
  walk("");
  return files;
}

export { HARNESS };
