import { describe, expect, it } from "vitest";
import { ok } from "../shared/result.ts";
import { collectPages, type DirEntry } from "./text-files.ts";

/** Pages of a recursive listing whose walk found nothing yet: empty, each with a new cursor. */
function emptyPages(): {
  fetched: () => number;
  fetch: (cursor: string | null) => Promise<ReturnType<typeof ok<Page>>>;
} {
  let count = 0;
  return {
    fetched: () => count,
    fetch: async (cursor) => {
      count += 1;
      return ok({ entries: [], cursor: `${cursor ?? ""}x` });
    },
  };
}
type Page = { entries: DirEntry[]; cursor: string | null };

describe("collectPages", () => {
  it("stops after maxPages pages that make progress without entries, and says the listing is incomplete", async () => {
    const pages = emptyPages();
    expect(await collectPages(pages.fetch, 5000, 8)).toEqual({ ok: true, value: { entries: [], complete: false } });
    expect(pages.fetched()).toBe(8);
  });

  it("refuses a cursor handed back unchanged instead of looping", async () => {
    const result = await collectPages(async () => ok({ entries: [], cursor: "same" }), 10);
    // The first page has no cursor to compare with; the second repeats it.
    expect(result.ok).toBe(false);
  });

  it("follows every page when they fit", async () => {
    const files = (n: string): DirEntry => ({ name: n, type: "file", size: 1 });
    const book: Record<string, Page> = {
      start: { entries: [files("a")], cursor: "1" },
      "1": { entries: [files("b")], cursor: null },
    };
    const listing = await collectPages(async (c) => ok(book[c ?? "start"]!), 10, 8);
    expect(listing).toEqual({ ok: true, value: { entries: [files("a"), files("b")], complete: true } });
  });
});
