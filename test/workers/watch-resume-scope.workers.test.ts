import { describe, expect, it } from "vitest";
import { call, cap, child, mintRoot } from "./vault.ts";
import { socketWatch, sseWatch, type WatchEvent } from "./watch-client.ts";

/**
 * Resuming a watch replays the root's journal from a version on: only the
 * changes inside the watching cap's subtree may come back, as they would
 * live. Watched by a child scoped to a subfolder (`in/`), with changes all
 * around it: a sibling whose name starts the same (`in2/`), the parent
 * folder, a move out of the subtree (seen as its source moved, never where to) and one into it.
 */
let counter = 0;

const feeds = [
  ["SSE", sseWatch],
  ["WebSocket", socketWatch],
] as const;

describe.each(["r2", "disk"] as const)("%s backend: resuming a subfolder's watch", (backend) => {
  for (const [kind, open] of feeds) {
    it(`over ${kind}, replays and streams only the subfolder's changes`, async () => {
      const root = cap((await mintRoot(`watch-scope/${backend}/${kind}/${++counter}/`, { backend })).token);
      const kid = await child(root, { path: "in" });
      await root.write("in/first.txt", "1");
      const res = await call("GET", `/object/${kid.token}/versions?path=first.txt`);
      expect(res.status).toBe(200);
      const [first] = ((await res.json()) as { versions: { id: string }[] }).versions;

      // The backlog the resume replays: inside and outside, interleaved.
      await root.write("out.txt", "o");
      await root.write("in/a.txt", "a");
      await root.write("in2/leak.txt", "l");
      await root.write("in/b.txt", "bb");
      await root.move({ from: "in/a.txt", to: "elsewhere/a.txt" });
      await root.write("elsewhere/c.txt", "c");
      await root.move({ from: "elsewhere/c.txt", to: "in/c.txt" });
      await root.remove("in2/leak.txt");

      const feed = await open(kid.token, first!.id);
      const replayed: WatchEvent[] = [];
      for (let i = 0; i < 4; i++) replayed.push(await feed.event());
      // Live ones after the backlog: one outside, then one inside, which must come next.
      await root.write("in2/live.txt", "x");
      await root.write("in/live.txt", "y");
      const live = await feed.event();
      feed.close();

      const seen = [...replayed, live];
      expect(seen.map((e) => [e.path, e.operation])).toEqual([
        ["a.txt", "created"],
        ["b.txt", "created"],
        ["a.txt", "moved"],
        ["c.txt", "created"],
        ["live.txt", "created"],
      ]);
      // Every field but the actor: a random base32 id can hold "in2" or "leak" (it did once, "…77in2b").
      const text = JSON.stringify(seen.map(({ actor: _, ...rest }) => rest));
      for (const outside of ["out.txt", "in2", "leak", "elsewhere"]) expect(text).not.toContain(outside);
    });
  }
});
