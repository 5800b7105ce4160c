import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRelPath, type RelPath } from "../shared/rel-path.ts";
import type { CheckedFile } from "../storage-adapters/checked-path.ts";
import type { StorageAdapter } from "../storage-adapters/storage-adapter.ts";
import { checked } from "../test/checked-paths.ts";
import { checkRoot } from "./path-check.ts";

const REPO = path.resolve(import.meta.dirname, "..");
const source = (file: string) => readFileSync(path.join(REPO, file), "utf8");
/** The cap object and the modules it is made of (durable-objects/cap-*.ts, tests aside). */
const CAP_FILES = readdirSync(path.join(REPO, "durable-objects"))
  .filter((name) => name.startsWith("cap-") && name.endsWith(".ts") && !name.endsWith(".test.ts"))
  .map((name) => `durable-objects/${name}`);
const code = (result: { ok: boolean; error?: { code: string } }) => (result.ok ? "ok" : result.error!.code);
const rel = (text: string): RelPath => {
  const parsed = parseRelPath(text);
  if (!parsed.ok) throw new Error(parsed.error.code);
  return parsed.value;
};

describe("the chokepoint's path step", () => {
  it("needs a file name for file operations, and not for folders or stats", () => {
    expect(code(checked(["r/"], "", "file"))).toBe("invalid_path");
    expect(checked(["r/"], "", "dir")).toMatchObject({ ok: true, value: { key: "r/" } });
    expect(checked(["r/"], "", "entry")).toMatchObject({ ok: true, value: { key: "r/" } });
  });

  it("joins every root level and the path into the key R2 stores, and refuses one over 1,024 bytes", () => {
    expect(checked(["r/", "a/"], "b/c.txt", "file")).toMatchObject({ ok: true, value: { key: "r/a/b/c.txt" } });
    expect(checked(["r/", "a/"], "b", "dir")).toMatchObject({ ok: true, value: { key: "r/a/b/" } });
    const root = [`${"x".repeat(250)}/${"y".repeat(250)}/${"z".repeat(250)}/`]; // 753 bytes
    expect(code(checked(root, `${"f".repeat(255)}/${"g".repeat(16)}`, "file"))).toBe("invalid_path");
    // Exactly 1,024 bytes: a file fits, the same path as a folder (one more byte, its `/`) does not.
    const fits = `${"f".repeat(255)}/${"g".repeat(1024 - 753 - 256)}`;
    expect(code(checked(root, fits, "file"))).toBe("ok");
    expect(code(checked(root, fits, "dir"))).toBe("invalid_path");
    expect(code(checked(root, "../x", "file"))).toBe("path_escapes");
  });

  it("gives a new root room for a name below it, and refuses one that does not parse", () => {
    expect(checkRoot(["r/", "a/"], rel("a"), "pathTooLong")).toMatchObject({ ok: true, value: { key: "r/a/" } });
    expect(code(checkRoot([`${"a/".repeat(511)}b/`], rel("b"), "pathTooLong"))).toBe("invalid_path");
    expect(checkRoot([`${"a/".repeat(511)}b/`], rel("b"), "prefixTooLong")).toMatchObject({
      ok: false,
      error: { message: "prefix too long" },
    });
    expect(code(checkRoot(["a/", "../"], rel("x"), "pathTooLong"))).toBe("path_escapes");
  });
});

/** The storage adapters' own code: the R2 adapter's facade and the modules it is made of, and the disk's. */
const ADAPTER_FILES = [
  "storage-adapters/r2-storage.ts",
  "storage-adapters/r2-writes.ts",
  "storage-adapters/r2-listing.ts",
  "storage-adapters/r2-folders.ts",
  "storage-adapters/r2-objects.ts",
  "storage-adapters/disk-storage.ts",
];

describe("one chokepoint", () => {
  it("is the only maker of checked paths", () => {
    const forged = /as (unknown as )?(CheckedFile|CheckedDir|CheckedEntry|CheckedRoot|CheckedOf)\b/;
    expect(CAP_FILES).toContain("durable-objects/cap-object.ts");
    for (const file of [...CAP_FILES, "durable-objects/root-registry.ts", ...ADAPTER_FILES, "worker/object-routes.ts"])
      expect(forged.test(source(file)), file).toBe(false);
    expect(forged.test(source("durable-objects/path-check.ts"))).toBe(true);
  });

  it("leaves the adapters nothing to re-check: they neither parse paths nor measure keys", () => {
    for (const file of ADAPTER_FILES) {
      expect(source(file), file).not.toMatch(/\b(parseRelPath|storageKey|MAX_KEY_BYTES|needsFileName)\b/);
    }
  });

  it("checks every right in authorize: no right is read anywhere else in the cap object's modules", () => {
    const text = source("durable-objects/cap-authorize.ts");
    const start = text.indexOf("  async authorize(\n    need: Need,\n    at?:");
    const end = text.indexOf("\n  }\n", start);
    expect(start).toBeGreaterThan(0);
    const outside = new Map([["durable-objects/cap-authorize.ts", text.slice(0, start) + text.slice(end)]]);
    for (const file of CAP_FILES) if (!outside.has(file)) outside.set(file, source(file));
    expect([...outside.keys()]).toEqual(
      expect.arrayContaining(["durable-objects/cap-object.ts", "durable-objects/cap-files.ts"]),
    );
    for (const [file, rest] of outside) {
      expect(rest, file).not.toMatch(/rights\.includes\(|rights\.(some|every)\(/);
      expect(rest, file).not.toMatch(/refuse\("needsRights"/);
    }
  });

  it("refuses, at compile time, a raw path handed to storage", () => {
    // Never run: these lines are here for the type checker (`npm run typecheck`).
    const typeChecks = (storage: StorageAdapter) => [
      // @ts-expect-error an adapter takes a checked path, not a root and a parsed path
      storage.read(["r/"], rel("x"), {}),
      // @ts-expect-error a checked path cannot be written out by hand
      storage.remove({ root: ["r/"], path: rel("x"), key: "r/x" }),
      storage.remove(null as unknown as CheckedFile),
    ];
    expect(typeof typeChecks).toBe("function");
  });
});
