import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { PROJECT_ROOT } from "./build-worker.ts";
import { readRuntimeConfig } from "./runtime-config.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "capvault-runtime-config-"));
function toml(name: string, text: string): string {
  const file = path.join(scratch, name);
  writeFileSync(file, text);
  return file;
}

describe("readRuntimeConfig", () => {
  it("reads what wrangler reads from the project's wrangler.toml", () => {
    const file = path.join(PROJECT_ROOT, "wrangler.toml");
    const theirs = unstable_readConfig({ config: file }, { hideWarnings: true });
    expect(readRuntimeConfig(file)).toEqual({
      compatibilityDate: theirs.compatibility_date,
      compatibilityFlags: theirs.compatibility_flags,
    });
  });

  it("takes top-level keys only, with comments, and no flags as none", () => {
    const file = toml(
      "a.toml",
      'name = "x"\ncompatibility_date = "2026-01-02" # pinned\n[env.dev]\ncompatibility_date = "1999-01-01"\n',
    );
    expect(readRuntimeConfig(file)).toEqual({ compatibilityDate: "2026-01-02", compatibilityFlags: [] });
  });

  it("refuses what it cannot read rather than guess", () => {
    expect(() => readRuntimeConfig(toml("b.toml", "compatibility_date = 2026-01-02\n"))).toThrow(/quoted string/);
    expect(() => readRuntimeConfig(toml("c.toml", 'name = "x"\n'))).toThrow(/compatibility_date/);
    expect(() =>
      readRuntimeConfig(toml("d.toml", 'compatibility_date = "2026-01-02"\ncompatibility_flags = "nodejs_compat"\n')),
    ).toThrow(/array of strings/);
    // Forms that would otherwise be missed or misread, silently: a null, a quoted key, a second value.
    const date = 'compatibility_date = "2026-01-02"\n';
    expect(() => readRuntimeConfig(toml("e.toml", `${date}compatibility_flags = null\n`))).toThrow(/array of strings/);
    expect(() => readRuntimeConfig(toml("f.toml", `${date}"compatibility_flags" = ["x"]\n`))).toThrow(/bare keys/);
    expect(() => readRuntimeConfig(toml("g.toml", `${date}compatibility_flags = [\n  "x"\n]\n`))).toThrow(
      /quoted string/,
    );
    expect(() => readRuntimeConfig(toml("h.toml", `${date}${date}`))).toThrow(/set twice/);
  });
});
