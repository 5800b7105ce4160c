import { describe, expect, it } from "vitest";
import { CapError } from "./cap-error.ts";
import { type WatchSource, watchChanges } from "./cap-watch.ts";

/**
 * What a vault, or something posing as one, answers a watcher: each open of
 * the stream gets the next scripted body; `opened` records the `since` each
 * open asked for. The vault's own streams are tested end to end in
 * test/node/fs-cap.node.test.ts; these are the bodies it never sends.
 */
function scripted(bodies: string[]): WatchSource & { opened: (string | undefined)[] } {
  const opened: (string | undefined)[] = [];
  return {
    opened,
    async open(since) {
      opened.push(since);
      const body = bodies.shift();
      if (body === undefined) throw new Error("opened once more than scripted");
      return new Response(body).body!;
    },
    alive: async () => null,
  };
}

const change = (version: string) =>
  `data: ${JSON.stringify({ version, operation: "modified", path: "a.md", at: "2026-12-01T12:00:00Z", size: 1, sha256: null, actor: "x" })}\n\n`;

async function drain(source: WatchSource, limit: number, seen: string[] = []) {
  for await (const event of watchChanges(source, { since: "v0" })) {
    seen.push(event.version);
    if (seen.length === limit) break;
  }
  return seen;
}

describe("watchChanges", () => {
  it("resumes where a resume frame says, then after the last change seen", async () => {
    const source = scripted([`${change("v1")}event: resume\ndata: {"since":"v1"}\n\n`, change("v2")]);
    expect(await drain(source, 2)).toEqual(["v1", "v2"]);
    expect(source.opened).toEqual(["v0", "v1"]);
  });

  it.each([
    ['{"since":7}', "a number"],
    ["{}", "nothing"],
    ['{"since":null}', "null"],
    ['{"since":""}', "empty"],
  ])("refuses a resume frame whose since is %s (%s): it would reopen the watch live and skip changes", async (data) => {
    const source = scripted([`${change("v1")}event: resume\ndata: ${data}\n\n`, change("v9")]);
    await expect(drain(source, 5)).rejects.toBeInstanceOf(CapError);
    expect(source.opened).toEqual(["v0"]);
  });

  it("refuses a change that names no version, before handing it out", async () => {
    const source = scripted([`data: {"operation":"modified","path":"a.md"}\n\n`, change("v9")]);
    const seen: string[] = [];
    await expect(drain(source, 5, seen)).rejects.toMatchObject({ code: "unavailable" });
    expect(seen).toEqual([]);
    expect(source.opened).toEqual(["v0"]);
  });
});
