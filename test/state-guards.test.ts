/**
 * A Durable Object whose state could not be brought to this build's format
 * (newer, or a failed migration) answers every call with that refusal and
 * touches nothing (durable-objects/state-migrations.ts). The refusal is the
 * first statement of every public method of each object class: a method added
 * without it would read or write state of a format it does not know. This
 * reads the classes' source, so a new method fails here until it has the guard.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

/** Each public method of `cls` in `file` (neither private nor the constructor), with its body's first statement. */
function methods(file: string, cls: string): { name: string; first: string }[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
  const found = source.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === cls,
  );
  expect(found, `${cls} in ${file}`).toBeDefined();
  return found!.members.filter(ts.isMethodDeclaration).flatMap((m) => {
    const privately =
      ts.isPrivateIdentifier(m.name) || m.modifiers?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword);
    if (privately || !m.body) return [];
    return [{ name: m.name.getText(source), first: m.body.statements[0]?.getText(source) ?? "" }];
  });
}

const CLASSES = [
  { file: "durable-objects/cap-object.ts", cls: "CapObject", guard: /^if \(this\.#blocked\) return\b/ },
  { file: "durable-objects/root-journal.ts", cls: "RootJournal", guard: /^if \(this\.#blocked\) return\b/ },
  { file: "durable-objects/root-registry.ts", cls: "RootRegistry", guard: /^if \(this\.#blocked\) return\b/ },
  {
    file: "durable-objects/oauth-registry.ts",
    cls: "OAuthRegistry",
    guard: /^(this\.#open\(\);|if \(this\.#blocked\) return\b)/,
  },
];

describe("every public method of a Durable Object refuses state it cannot serve, first", () => {
  it.each(CLASSES)("$cls", ({ file, cls, guard }) => {
    const found = methods(file, cls);
    expect(found.length).toBeGreaterThan(3);
    const unguarded = found.filter((m) => !guard.test(m.first)).map((m) => `${m.name}: ${m.first}`);
    expect(unguarded).toEqual([]);
  });
});
