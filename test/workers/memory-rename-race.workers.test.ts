import { describe, expect, it } from "vitest";
import { createMemoryHandler } from "../../memory-tool/memory-handler.ts";
import type { MemoryFiles } from "../../memory-tool/text-files.ts";
import { capStubTextFiles } from "../../worker/cap-stub-text-files.ts";
import { capObject } from "./slow-upload.ts";
import { cap, mintRoot } from "./vault.ts";

/**
 * The memory tool's rename looks at the destination, then moves: a
 * destination created in between (by another client, at the same moment)
 * must not be overwritten. The moment is made exact, not raced for: the
 * cap's real files, but the destination's look returns only once another
 * client's write there has landed.
 */
let counter = 0;

/** `files`, where the first look at `path` answers what it saw, but only after `meanwhile` ran. */
function createdWhileLooking(files: MemoryFiles, path: string, meanwhile: () => Promise<void>): MemoryFiles {
  let looked = false;
  return {
    ...files,
    async stat(p) {
      const seen = await files.stat(p);
      if (p === path && !looked) {
        looked = true;
        await meanwhile();
      }
      return seen;
    },
  };
}

describe.each(["r2", "disk"] as const)("%s backend: rename onto a destination created meanwhile", (backend) => {
  const cases = [
    { what: "a file", from: "a.md", to: "b.md", written: "b.md" },
    { what: "a folder, file by file", from: "dir", to: "moved", written: "moved/x.md" },
  ];
  for (const { what, from, to, written } of cases) {
    it(`${what}: refused, the new destination kept, the source left`, async () => {
      const root = cap((await mintRoot(`memory-rename-race/${backend}/${++counter}/`, { backend })).token);
      const source = from === "dir" ? "dir/x.md" : from;
      expect((await root.write(source, "source")).status).toBe(201);
      const other = async () => {
        expect((await root.write(written, "theirs")).status).toBe(201);
      };
      const files = createdWhileLooking(capStubTextFiles(await capObject(root.token)), to, other);
      const result = await createMemoryHandler(files)({
        command: "rename",
        old_path: `/memories/${from}`,
        new_path: `/memories/${to}`,
      });
      expect(result.isError, result.text).toBe(true);
      expect(result.code).toBe("conflict");
      expect(result.text).toContain(`/memories/${to}`);
      expect(await (await root.read(written)).text()).toBe("theirs");
      expect(await (await root.read(source)).text()).toBe("source");
    });
  }
});
