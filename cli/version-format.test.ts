/**
 * Versions and changes come from the vault as JSON whatever their declared
 * types: a hostile vault or proxy can send a string of escape sequences where a
 * size or an id should be. They print escaped, never raw, and never crash.
 */
import { describe, expect, it } from "vitest";
import type { Version, WatchEvent } from "../clients/typescript/index.ts";
import { formatChange, formatVersions } from "./version-format.ts";

const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\u009b2J\u202e";

describe("version output from a hostile vault", () => {
  it("escapes a size, id or actor that is not what its type says", () => {
    const change = { version: 7, operation: "created", path: "a", size: HOSTILE } as unknown as WatchEvent;
    const line = formatChange(change);
    expect(line).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    expect(line).toContain("\\x1b");
    const version = { id: 5, operation: "modified", at: "x", size: HOSTILE, sha256: null, actor: HOSTILE } as unknown;
    const table = formatVersions("a", [version as Version]);
    expect(table).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
  });
});
