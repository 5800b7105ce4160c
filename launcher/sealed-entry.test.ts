import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sealEntry } from "./sealed-entry.ts";

// The pinned Miniflare's own entry worker, as the launcher hands it to workerd.
const miniflare = path.dirname(createRequire(import.meta.url).resolve("miniflare/package.json"));
const file = path.join(miniflare, "dist/src/workers/core/entry.worker.js");
const source = readFileSync(file, "utf8");

describe("sealEntry", () => {
  it("reads the bucket routes' services as absent in the pinned entry worker, and changes nothing else", () => {
    expect(source).toContain("/cdn-cgi/local/r2/public");
    const sealed = sealEntry(source, file);
    expect(sealed).not.toContain("env[CoreBindings.SERVICE_R2_PUBLIC]");
    expect(sealed).not.toContain("env[CoreBindings.SERVICE_R2_S3]");
    expect(sealed.replaceAll("undefined", "")).toBe(
      source
        .replace("env[CoreBindings.SERVICE_R2_PUBLIC]", "")
        .replace("env[CoreBindings.SERVICE_R2_S3]", "")
        .replaceAll("undefined", ""),
    );
  });

  it("throws on an entry worker whose routes it does not know, rather than start with them open", () => {
    const moved = source.replace("env[CoreBindings.SERVICE_R2_PUBLIC]", "env.R2_PUBLIC");
    expect(() => sealEntry(moved, file)).toThrow(/not the pinned version/);
    const twice = `${source}\nenv[CoreBindings.SERVICE_R2_S3];`;
    expect(() => sealEntry(twice, file)).toThrow(/not the pinned version/);
  });
});
