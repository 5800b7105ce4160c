import { describe, expect, it } from "vitest";
import { childChain, effectiveLimits, enclosingPrefixes, parseLimits } from "./quota.ts";

describe("quota chains", () => {
  it("a child tightens, never loosens, and may add a limit its parent lacks", () => {
    const root = childChain([], "", { maxBytes: 100, maxFiles: null });
    expect(root).toEqual({ ok: true, value: [{ prefix: "", maxBytes: 100, maxFiles: null }] });
    if (!root.ok) return;
    expect(childChain(root.value, "a/", { maxBytes: 101, maxFiles: null }).ok).toBe(false);
    const kid = childChain(root.value, "a/", { maxBytes: null, maxFiles: 3 });
    expect(kid.ok && effectiveLimits(kid.value)).toEqual({ maxBytes: 100, maxFiles: 3 });
    if (!kid.ok) return;
    expect(childChain(kid.value, "a/b/", { maxBytes: 50, maxFiles: 4 }).ok).toBe(false);
    // Silent: the parent's chain, unchanged.
    expect(childChain(kid.value, "a/b/", { maxBytes: null, maxFiles: null })).toEqual(kid);
  });

  it("same-root children merge into one rule, so a long line of them keeps the chain short", () => {
    let chain = childChain([], "", { maxBytes: 1000, maxFiles: 10 });
    for (let i = 0; i < 50 && chain.ok; i++)
      chain = childChain(chain.value, "", { maxBytes: 1000 - i, maxFiles: null });
    expect(chain).toEqual({ ok: true, value: [{ prefix: "", maxBytes: 951, maxFiles: 10 }] });
  });

  it("parses counts from 0 to the largest safe integer, or null; nothing else", () => {
    expect(parseLimits({})).toEqual({ ok: true, value: { maxBytes: null, maxFiles: null } });
    expect(parseLimits({ maxBytes: 0, maxFiles: Number.MAX_SAFE_INTEGER }).ok).toBe(true);
    for (const bad of [-1, 0.5, "1", true, [], {}, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(parseLimits({ maxBytes: bad }).ok).toBe(false);
      expect(parseLimits({ maxFiles: bad }).ok).toBe(false);
    }
  });

  it("a path lies in the root and in each of its folders", () => {
    expect(enclosingPrefixes("f")).toEqual([""]);
    expect(enclosingPrefixes("a/b/c.txt")).toEqual(["", "a/", "a/b/"]);
  });
});
