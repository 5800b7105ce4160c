import { describe, expect, it } from "vitest";
import { type ArchivedCap, CALL_BYTES, stagingCalls } from "./import-command.ts";

const cap = (i: number, audit: unknown[] = [], children: unknown[] = []): ArchivedCap & { i: number } => ({
  i,
  record: { key: i.toString(16).padStart(64, "0") },
  audit,
  children,
});
/** What the vault reads of a call: its JSON body, in bytes. */
const bodyBytes = (value: object) => Buffer.byteLength(JSON.stringify({ archiveId: "x".repeat(32), ...value }));

describe("stagingCalls: an archive record's caps as the calls the vault takes", () => {
  it("at most 4 caps a call, in order, none lost", () => {
    const caps = Array.from({ length: 23 }, (_, i) => cap(i));
    const calls = stagingCalls(caps);
    expect(calls.map((c) => c.caps.length)).toEqual([4, 4, 4, 4, 4, 3]);
    expect(calls.flatMap((c) => c.caps)).toEqual(caps);
    expect(calls.flatMap((c) => c.pages)).toEqual([]);
    expect(stagingCalls(caps.slice(0, 4)).map((c) => c.caps.length)).toEqual([4]);
    expect(stagingCalls([])).toEqual([]);
  });

  it("a call stays under the vault's 512 KiB body, however few caps fill it", () => {
    const big = (i: number) => cap(i, ["a".repeat(200 * 1024)]);
    const calls = stagingCalls([big(0), big(1), big(2), big(3), big(4)]);
    expect(calls.map((c) => c.caps.length)).toEqual([2, 2, 1]);
    for (const call of calls) expect(bodyBytes({ caps: call.caps })).toBeLessThan(512 * 1024);
  });

  it("a cap larger than a call: staged alone with what fits, the rest in pages, audit oldest first, nothing lost", () => {
    // The largest cap an archive can carry, about: 1,100 audit lines of 256-character paths, 1,000 children of 1 KiB paths.
    const audit = Array.from({ length: 1100 }, (_, n) => ({ at: n, path: "é".repeat(256) }));
    const children = Array.from({ length: 1000 }, (_, n) => ({ id: n, path: "p".repeat(1024) }));
    const small = cap(1);
    const calls = stagingCalls([small, cap(2, audit, children), cap(3)]);
    expect(calls.map((c) => c.caps.map((x) => x.i))).toEqual([[1], [2], [3]]);
    const [, split] = calls;
    expect(split!.pages.length).toBeGreaterThan(1);
    for (const page of split!.pages) {
      expect(page.key).toBe(cap(2).record.key);
      expect(page.audit.length + page.children.length).toBeGreaterThan(0);
      expect(bodyBytes(page)).toBeLessThan(512 * 1024);
    }
    expect(bodyBytes({ caps: split!.caps })).toBeLessThan(512 * 1024);
    const head = split!.caps[0]!;
    expect(head.record).toEqual(cap(2).record);
    expect([...head.audit, ...split!.pages.flatMap((p) => p.audit)]).toEqual(audit);
    expect([...head.children, ...split!.pages.flatMap((p) => p.children)]).toEqual(children);
    expect(CALL_BYTES).toBeLessThan(512 * 1024);
  });
});
