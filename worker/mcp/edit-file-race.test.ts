/**
 * edit_file under a concurrent writer, with the server wired to an in-memory
 * file store that honours If-Match like the vault: the edit is redone on the
 * new content instead of overwriting the other writer, and a file that keeps
 * changing is refused with precondition_failed.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import type { CapObject } from "../../durable-objects/cap-object.ts";
import type { TextFiles } from "../../memory-tool/text-files.ts";
import { refusal } from "../../shared/refusals.ts";
import { failed, ok } from "../../shared/result.ts";
import { createCapMcpServer } from "./mcp-server.ts";

/** One file in memory; `interfere(n)` runs before the n-th write, like another writer getting in first. */
function racingFile(
  initial: string,
  interfere: (n: number, set: (text: string) => void) => void,
): { files: TextFiles; text: () => string } {
  let text = initial;
  let version = 1;
  let writes = 0;
  const set = (next: string) => {
    text = next;
    version++;
  };
  const files: TextFiles = {
    readText: async () => ok({ text, etag: `v${version}` }),
    writeText: async (_path, next, options) => {
      interfere(writes++, set);
      if (options?.ifMatch !== undefined && options.ifMatch !== `v${version}`)
        return failed(refusal("preconditionFailed"));
      set(next);
      return ok({ created: false, size: next.length, etag: `v${version}`, sha256: `s${version}` });
    },
    stat: async () => failed(refusal("notFound")),
    list: async () => failed(refusal("notFound")),
    delete: async () => failed(refusal("notFound")),
    move: async () => failed(refusal("notFound")),
  };
  return { files, text: () => text };
}

async function editFile(text: TextFiles, edits: { oldText: string; newText: string }[]) {
  const files = {
    ...text,
    readBytes: async () => failed(refusal("notFound")),
    checkFolder: async () => failed(refusal("notFound")),
  };
  const server = createCapMcpServer({ files, cap: {} as DurableObjectStub<CapObject>, origin: "http://vault.test" }, [
    "read",
    "write",
  ]);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(clientSide);
  try {
    return (await client.callTool({ name: "edit_file", arguments: { path: "f.md", edits } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
  } finally {
    await client.close();
    await server.close();
  }
}

describe("edit_file with another writer in between", () => {
  it("redoes the edit on the other writer's content", async () => {
    const file = racingFile("a: 1\nb: 2\n", (n, set) => {
      if (n === 0) set("a: 1\nb: 2\nc: 3\n");
    });
    const result = await editFile(file.files, [{ oldText: "a: 1", newText: "a: 10" }]);
    expect(result.isError).toBeFalsy();
    expect(file.text()).toBe("a: 10\nb: 2\nc: 3\n");
    expect(result.content[0]!.text).toContain("-a: 1\n+a: 10\n b: 2\n c: 3\n");
  });

  it("refuses with precondition_failed when the file keeps changing, keeping the other writer's content", async () => {
    const file = racingFile("v0\n", (n, set) => set(`v${n + 1}\n`));
    const result = await editFile(file.files, [{ oldText: "v", newText: "w" }]);
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^precondition_failed: /) }],
    });
    expect(file.text()).toBe("v3\n");
  });
});
