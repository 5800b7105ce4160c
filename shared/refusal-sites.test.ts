import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REFUSALS } from "./refusals.ts";

const REPO = path.resolve(import.meta.dirname, "..");
/** Where refusals are given: everything the vault runs, and the two tools. */
const SCOPE = ["shared", "worker", "durable-objects", "storage-adapters", "disk-host", "memory-tool"];
/** The tables themselves, and the Result helpers they build on. */
const TABLES = new Set([
  "shared/refusals.ts",
  "shared/refusals-files.ts",
  "shared/refusals-protocols.ts",
  "shared/result.ts",
  "memory-tool/memory-refusals.ts",
  "worker/mcp/mcp-refusals.ts",
]);

function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const dir of SCOPE) {
    for (const entry of readdirSync(path.join(REPO, dir), { recursive: true, withFileTypes: true })) {
      const full = path.join(entry.parentPath, entry.name);
      const file = path.relative(REPO, full).split(path.sep).join("/");
      if (!entry.isFile() || !file.endsWith(".ts") || file.endsWith(".test.ts") || TABLES.has(file)) continue;
      out.push({ file, text: readFileSync(full, "utf8") });
    }
  }
  return out;
}

/** Lines matching `pattern`, as `file:line: text`. */
function hits(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const { file, text } of sources())
    text.split("\n").forEach((line, i) => {
      if (pattern.test(line.replace(/\/\/.*$/, ""))) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  return found;
}

describe("refusal texts live in their tables", () => {
  it("scans the sources it means to", () => {
    const files = sources().map((s) => s.file);
    expect(files).toContain("storage-adapters/r2-storage.ts");
    expect(files).toContain("disk-host/disk-ops.ts");
    expect(files).toContain("durable-objects/cap-object.ts");
    expect(files.length).toBeGreaterThan(60);
  });

  it("has no call site that builds a refusal from a code (and maybe a message) instead of naming a reason", () => {
    expect(hits(/(^|[^\w.])fail(ure)?\s*(<[^>()]*>)?\s*\(/)).toEqual([]);
  });

  it("has no failure object written out with a literal message", () => {
    expect(hits(/\bmessage:\s*["'`]/)).toEqual([]);
  });

  it("spells no table text anywhere else, not even as a constant of its own", () => {
    const texts = Object.values(REFUSALS).flatMap(({ message }: { message: unknown }) =>
      typeof message === "string" && message.length >= 12 ? [message] : [],
    );
    const found: string[] = [];
    for (const { file, text } of sources())
      for (const message of texts) if (text.includes(JSON.stringify(message))) found.push(`${file}: ${message}`);
    expect(found).toEqual([]);
  });
});
