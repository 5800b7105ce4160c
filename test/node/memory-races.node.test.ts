/**
 * The memory tool's edits against another writer (If-Match), against a
 * running vault: a str_replace or insert recomputes on the new content, and
 * a file that keeps changing is refused with the other writer's content kept.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { fsCapTextFiles } from "../../clients/typescript/fs-cap-text-files.ts";
import { createMemoryHandler } from "../../memory-tool/memory-handler.ts";
import type { MemoryFiles } from "../../memory-tool/text-files.ts";
import { sharedVault } from "./shared-vault.ts";

let admin: AdminClient;

beforeAll(async () => {
  const vault = await sharedVault("memory-races");
  admin = new AdminClient(vault.url, vault.adminToken);
});

describe("concurrent edits (If-Match)", () => {
  let fs: FsCap;
  beforeAll(async () => {
    fs = await admin.mintRoot({ backend: "r2", prefix: `memtest-race-${randomUUID()}/`, label: "race" });
  });

  /** Files whose first `races` writes are each preceded by another writer changing the file. */
  const racing = (races: number, change: (n: number) => Promise<unknown>): MemoryFiles => {
    const files = fsCapTextFiles(fs);
    let left = races;
    return {
      ...files,
      async writeText(path, text, options) {
        if (left > 0) await change(races - left--);
        return files.writeText(path, text, options);
      },
    };
  };

  it("str_replace recomputes on the new content instead of overwriting another writer", async () => {
    await fs.write("race.md", "a: 1\nb: 2\n");
    const memory = createMemoryHandler(racing(1, () => fs.write("race.md", "a: 1\nb: 2\nc: 3\n")));
    const result = await memory({
      command: "str_replace",
      path: "/memories/race.md",
      old_str: "a: 1",
      new_str: "a: 10",
    });
    expect(result.isError).toBe(false);
    expect(await fs.readText("race.md")).toBe("a: 10\nb: 2\nc: 3\n");
  });

  it("insert does the same", async () => {
    await fs.write("race2.md", "x\n");
    const memory = createMemoryHandler(racing(2, (n) => fs.write("race2.md", `x\nother ${n}\n`)));
    const result = await memory({ command: "insert", path: "/memories/race2.md", insert_line: 0, insert_text: "top" });
    expect(result.isError).toBe(false);
    expect(await fs.readText("race2.md")).toBe("top\nx\nother 1\n");
  });

  it("a file that keeps changing is refused with precondition_failed, the other writer's content kept", async () => {
    await fs.write("race3.md", "v0\n");
    const memory = createMemoryHandler(racing(10, (n) => fs.write("race3.md", `v${n + 1}\n`)));
    const result = await memory({ command: "str_replace", path: "/memories/race3.md", old_str: "v", new_str: "w" });
    expect(result).toMatchObject({ isError: true, code: "precondition_failed" });
    expect(result.text).toBe(
      "Error: The file /memories/race3.md kept changing while it was being edited; no change was made. View it and try again.",
    );
    expect(await fs.readText("race3.md")).toBe("v3\n");
  });
});
