/**
 * The memory tool against a running vault, command by command, with the
 * reference implementation's exact result strings, through both ways in:
 * the SDK (`createMemoryTool` over `FsCap`) and the worker route
 * (`POST /object/<token>/memory`). Every hostile path the reference SDKs got
 * wrong is refused and leaves the vault unchanged. Concurrent edits:
 * memory-races.node.test.ts.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { type Run, ways } from "./memory-tool-ways.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const PREFIX = "memtest-secret-prefix-";
/** This run's own roots in the shared vault. */
const RUN = randomUUID();
let vault: SharedVault;
let admin: AdminClient;
/** Every result text any test saw, checked at the end for leaked roots and host paths. */
const seen: string[] = [];

beforeAll(async () => {
  vault = await sharedVault("memory-tool");
  admin = new AdminClient(vault.url, vault.adminToken);
});

describe.each(ways)("memory tool through the %s", (way, connect) => {
  let fs: FsCap;
  let run: Run;
  const call = async (input: unknown) => {
    const result = await run(input);
    seen.push(result.text);
    return result;
  };
  const ok = async (input: unknown) => {
    const result = await call(input);
    expect(result.isError, result.text).toBe(false);
    return result.text;
  };
  const error = async (input: unknown) => {
    const result = await call(input);
    expect(result.isError, result.text).toBe(true);
    expect(result.text.startsWith("Error: ")).toBe(true);
    return result;
  };
  /**
   * Every file under the cap with the SHA-256 of its bytes, from one recursive
   * listing: what "nothing changed" is checked against.
   */
  const snapshot = async (): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for await (const file of fs.list("", { depth: 0 })) {
      // Every file here was written through the vault, so each has its hash: one missing would compare as equal.
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
      out[file.name] = String(file.sha256);
    }
    return out;
  };
  /** Every file under `dir` with its text. */
  const contents = async (dir: string): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for await (const file of fs.list(dir, { depth: 0 }))
      out[`${dir}/${file.name}`] = await fs.readText(`${dir}/${file.name}`);
    return out;
  };

  beforeAll(async () => {
    fs = await admin.mintRoot({
      backend: "r2",
      prefix: `${PREFIX}${RUN}-${way === "SDK" ? "sdk" : "http"}/`,
      label: way,
    });
    run = connect(fs);
  });

  it("views an empty /memories", async () => {
    expect(await ok({ command: "view", path: "/memories" })).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
    );
  });

  it("create writes a new file and, as the reference, never replaces a file or a folder", async () => {
    expect(await ok({ command: "create", path: "/memories/notes/todo.md", file_text: "first\n" })).toBe(
      "File created successfully at: /memories/notes/todo.md",
    );
    expect(await fs.readText("notes/todo.md")).toBe("first\n");
    const again = await error({ command: "create", path: "/memories/notes/todo.md", file_text: "second\n" });
    expect(again).toMatchObject({ code: "conflict", text: "Error: File /memories/notes/todo.md already exists" });
    expect(await fs.readText("notes/todo.md")).toBe("first\n");
    const onFolder = await error({ command: "create", path: "/memories/notes", file_text: "x" });
    expect(onFolder.text).toBe("Error: File /memories/notes already exists");
    const onRoot = await error({ command: "create", path: "/memories", file_text: "x" });
    expect(onRoot.text).toBe("Error: File /memories already exists");
    await fs.delete("notes/todo.md");
  });

  it("views a directory two levels deep, hidden items excluded, sizes of what lies beneath", async () => {
    await fs.write("tree/a.md", "12345");
    await fs.write("tree/.hidden", "abc");
    await fs.write("tree/d/b.md", "x".repeat(1500));
    await fs.write("tree/d/e/deep.md", "0123456789");
    await fs.write("tree/d/.secret/x.md", "hidden");
    expect(await ok({ command: "view", path: "/memories/tree" })).toBe(
      [
        "Here're the files and directories up to 2 levels deep in /memories/tree, excluding hidden items and node_modules:",
        "1.5K\t/memories/tree",
        "5B\t/memories/tree/a.md",
        "1.5K\t/memories/tree/d/",
        "1.5K\t/memories/tree/d/b.md",
        "10B\t/memories/tree/d/e/",
      ].join("\n"),
    );
    // One trailing slash names the same directory and never doubles in the listing.
    expect(await ok({ command: "view", path: "/memories/tree/d/" })).toBe(
      [
        "Here're the files and directories up to 2 levels deep in /memories/tree/d/, excluding hidden items and node_modules:",
        "1.5K\t/memories/tree/d/",
        "1.5K\t/memories/tree/d/b.md",
        "10B\t/memories/tree/d/e/",
        "10B\t/memories/tree/d/e/deep.md",
      ].join("\n"),
    );
  });

  it("views a file with numbered lines, whole or by view_range", async () => {
    await fs.write("view.md", "alpha\nbeta\ngamma\n");
    expect(await ok({ command: "view", path: "/memories/view.md" })).toBe(
      "Here's the content of /memories/view.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\tgamma\n     4\t",
    );
    expect(await ok({ command: "view", path: "/memories/view.md", view_range: [2, -1] })).toBe(
      "Here's the content of /memories/view.md with line numbers:\n     2\tbeta\n     3\tgamma\n     4\t",
    );
    expect(await ok({ command: "view", path: "/memories/view.md", view_range: [2, 2] })).toBe(
      "Here's the content of /memories/view.md with line numbers:\n     2\tbeta",
    );
    const badRange = await error({ command: "view", path: "/memories/view.md", view_range: [1, "x"] });
    expect(badRange.code).toBe("bad_request");
    const missing = await error({ command: "view", path: "/memories/nope.md" });
    expect(missing).toMatchObject({
      code: "not_found",
      text: "Error: The path /memories/nope.md does not exist. Please provide a valid path.",
    });
  });

  it("str_replace replaces exactly one occurrence and shows the snippet", async () => {
    await fs.write("edit.md", "l1\nl2\nl3 old\nl4\nl5\nl6\n");
    expect(await ok({ command: "str_replace", path: "/memories/edit.md", old_str: "old", new_str: "new $& $1" })).toBe(
      "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
        "     1\tl1\n     2\tl2\n     3\tl3 new $& $1\n     4\tl4\n     5\tl5",
    );
    expect(await fs.readText("edit.md")).toBe("l1\nl2\nl3 new $& $1\nl4\nl5\nl6\n");

    const none = await error({ command: "str_replace", path: "/memories/edit.md", old_str: "absent", new_str: "x" });
    expect(none.text).toBe(
      "Error: No replacement was performed, old_str `absent` did not appear verbatim in /memories/edit.md.",
    );
    const many = await error({ command: "str_replace", path: "/memories/edit.md", old_str: "l", new_str: "x" });
    expect(many.text).toBe(
      "Error: No replacement was performed. Multiple occurrences of old_str `l` in lines: 1, 2, 3, 4, 5, 6. Please ensure it is unique",
    );
    const missing = await error({ command: "str_replace", path: "/memories/gone.md", old_str: "a", new_str: "b" });
    expect(missing.text).toBe("Error: The path /memories/gone.md does not exist. Please provide a valid path.");
    const dir = await error({ command: "str_replace", path: "/memories/tree", old_str: "a", new_str: "b" });
    expect(dir.text).toBe("Error: The path /memories/tree is not a file.");
    expect(await fs.readText("edit.md")).toBe("l1\nl2\nl3 new $& $1\nl4\nl5\nl6\n");
  });

  it("insert splices a line into the file's lines, as the reference: one trailing newline of the text taken off", async () => {
    await fs.write("ins.md", "one\ntwo");
    expect(await ok({ command: "insert", path: "/memories/ins.md", insert_line: 0, insert_text: "zero\n" })).toBe(
      "The file /memories/ins.md has been edited.",
    );
    expect(await fs.readText("ins.md")).toBe("zero\none\ntwo");
    await ok({ command: "insert", path: "/memories/ins.md", insert_line: 3, insert_text: "three" });
    expect(await fs.readText("ins.md")).toBe("zero\none\ntwo\nthree");
    const bad = await error({ command: "insert", path: "/memories/ins.md", insert_line: 5, insert_text: "x" });
    expect(bad.text).toBe(
      "Error: Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 4]",
    );
    const notInt = await error({ command: "insert", path: "/memories/ins.md", insert_line: 1.5, insert_text: "x" });
    expect(notInt.text).toBe(
      "Error: Invalid `insert_line` parameter: 1.5. It should be within the range of lines of the file: [0, 4]",
    );
    expect(await fs.readText("ins.md")).toBe("zero\none\ntwo\nthree");
    // A final newline is followed by an empty line: insert_line may be one past it, and the text lands after that line.
    await fs.write("ins-nl.md", "a\n");
    await ok({ command: "insert", path: "/memories/ins-nl.md", insert_line: 2, insert_text: "b\n" });
    expect(await fs.readText("ins-nl.md")).toBe("a\n\nb");
    await ok({ command: "insert", path: "/memories/ins-nl.md", insert_line: 1, insert_text: "x\n\n" });
    expect(await fs.readText("ins-nl.md")).toBe("a\nx\n\n\nb");
  });

  it("delete removes a file, or a directory with everything in it", async () => {
    await fs.write("del/one.md", "1");
    await fs.write("del/sub/two.md", "2");
    await fs.write("del/.hidden", "3");
    await fs.write("keep/del-not.md", "keep");
    expect(await ok({ command: "delete", path: "/memories/del/one.md" })).toBe(
      "Successfully deleted /memories/del/one.md",
    );
    await fs.makeFolder("del/empty/deeper");
    expect(await ok({ command: "delete", path: "/memories/del" })).toBe("Successfully deleted /memories/del");
    // As the reference's rm -r: no emptied folder left behind, empty ones included.
    await expect(fs.stat("del")).rejects.toMatchObject({ code: "not_found" });
    expect(await fs.readText("keep/del-not.md")).toBe("keep");
    const missing = await error({ command: "delete", path: "/memories/del" });
    expect(missing).toMatchObject({ code: "not_found", text: "Error: The path /memories/del does not exist" });
  });

  it("rename moves a file or a directory, never onto an existing path", async () => {
    await fs.write("ren/a.md", "A");
    await fs.write("ren/dir/x.md", "X");
    await fs.write("ren/dir/y/z.md", "Z");
    await fs.write("ren/taken.md", "T");
    await fs.makeFolder("ren/dir/empty");
    expect(await ok({ command: "rename", old_path: "/memories/ren/a.md", new_path: "/memories/ren/b.md" })).toBe(
      "Successfully renamed /memories/ren/a.md to /memories/ren/b.md",
    );
    expect(await fs.readText("ren/b.md")).toBe("A");
    expect(await ok({ command: "rename", old_path: "/memories/ren/dir", new_path: "/memories/ren/moved" })).toBe(
      "Successfully renamed /memories/ren/dir to /memories/ren/moved",
    );
    expect(await contents("ren")).toEqual({
      "ren/b.md": "A",
      "ren/moved/x.md": "X",
      "ren/moved/y/z.md": "Z",
      "ren/taken.md": "T",
    });
    // As the reference's one rename(2): the source folder gone, the empty one moved with the rest.
    await expect(fs.stat("ren/dir")).rejects.toMatchObject({ code: "not_found" });
    expect(await fs.stat("ren/moved/empty")).toMatchObject({ type: "dir" });

    const before = await snapshot();
    const onto = await error({ command: "rename", old_path: "/memories/ren/b.md", new_path: "/memories/ren/taken.md" });
    expect(onto).toMatchObject({
      code: "conflict",
      text: "Error: The destination /memories/ren/taken.md already exists",
    });
    const ontoDir = await error({ command: "rename", old_path: "/memories/ren/b.md", new_path: "/memories/ren/moved" });
    expect(ontoDir.text).toBe("Error: The destination /memories/ren/moved already exists");
    const missing = await error({
      command: "rename",
      old_path: "/memories/ren/none.md",
      new_path: "/memories/ren/c.md",
    });
    expect(missing.text).toBe("Error: The path /memories/ren/none.md does not exist");
    const intoItself = await error({
      command: "rename",
      old_path: "/memories/ren/moved",
      new_path: "/memories/ren/moved/inner",
    });
    expect(intoItself.code).toBe("invalid_path");
    expect(await snapshot()).toEqual(before);
  });

  describe("hostile paths", () => {
    it.each([
      ["/memories/..", "path_escapes"],
      ["/memories/../etc/passwd", "path_escapes"],
      ["/memories/a/../../x", "path_escapes"],
      ["/memories/a/..", "path_escapes"],
      ["/memoriesX", "invalid_path"],
      ["/memoriesX/evil.md", "invalid_path"],
      ["/memories-evil.md", "invalid_path"],
      ["/etc/passwd", "invalid_path"],
      ["memories/x.md", "invalid_path"],
      ["", "invalid_path"],
      ["/", "invalid_path"],
      ["/Memories/x.md", "invalid_path"],
      ["/memories/.", "invalid_path"],
      ["/memories/./x.md", "invalid_path"],
      ["/memories/a//b.md", "invalid_path"],
      ["/memories//x.md", "absolute_path"],
      ["/memories/a\\..\\..\\x", "invalid_path"],
      ["/memories/a\nb.md", "invalid_path"],
      ["/memories/.capvault-tmp", "invalid_path"],
    ])("%j is refused with %s by every command, and nothing changes", async (path, code) => {
      await fs.write("guard.md", "guard\n");
      const before = await snapshot();
      const inputs = [
        { command: "view", path },
        { command: "create", path, file_text: "pwned" },
        { command: "str_replace", path, old_str: "guard", new_str: "pwned" },
        { command: "insert", path, insert_line: 0, insert_text: "pwned" },
        { command: "delete", path },
        { command: "rename", old_path: path, new_path: "/memories/stolen.md" },
        { command: "rename", old_path: "/memories/guard.md", new_path: path },
      ];
      // All at once: each is refused before it touches storage, so none can see another's effect.
      const results = await Promise.all(inputs.map((input) => error(input)));
      for (const [i, input] of inputs.entries()) {
        const result = results[i]!;
        expect(result.code, `${input.command} ${JSON.stringify(path)}`).toBe(code);
        expect(result.text.startsWith(`Error: ${code}: `)).toBe(true);
        // Control characters in a refused path are escaped, never echoed raw.
        expect(result.text).not.toMatch(/[\n\r\u0000]/);
      }
      expect(await snapshot()).toEqual(before);
    });

    it.each(["/memories", "/memories/"])("deleting the root %j is refused and deletes nothing", async (path) => {
      await fs.write("survivor.md", "still here");
      const before = await snapshot();
      const result = await error({ command: "delete", path });
      expect(result).toMatchObject({ code: "forbidden", text: "Error: Cannot delete the /memories directory itself" });
      expect(await snapshot()).toEqual(before);
    });

    it("deleting /memories/. is refused by the parser, not taken as the root", async () => {
      const before = await snapshot();
      const result = await error({ command: "delete", path: "/memories/." });
      expect(result).toMatchObject({ code: "invalid_path" });
      expect(await snapshot()).toEqual(before);
      expect(Object.keys(before).length).toBeGreaterThan(0);
    });

    it.each([
      ["/memories", "/memories/elsewhere", "forbidden"],
      ["/memories/", "/memories/elsewhere", "forbidden"],
      ["/memories/survivor.md", "/memories", "conflict"],
      ["/memories/survivor.md", "/memories/", "conflict"],
      ["/memories/survivor.md", "/tmp/out.md", "invalid_path"],
      ["/memories/survivor.md", "/memoriesX/out.md", "invalid_path"],
      ["/memories/survivor.md", "/memories/../out.md", "path_escapes"],
    ])("rename %j → %j is refused (%s)", async (from, to, code) => {
      const before = await snapshot();
      expect((await error({ command: "rename", old_path: from, new_path: to })).code).toBe(code);
      expect(await snapshot()).toEqual(before);
    });

    it("malformed commands are refused as bad_request", async () => {
      expect((await error({ command: "format", path: "/memories" })).text).toBe(
        "Error: bad_request: Unknown command: format",
      );
      expect((await error({ command: "view" })).text).toBe('Error: bad_request: "path" must be a string');
      expect((await error({ command: "create", path: "/memories/x.md" })).text).toBe(
        'Error: bad_request: "file_text" must be a string',
      );
      expect((await error({ path: "/memories" })).code).toBe("bad_request");
    });
  });

  it("answers forbidden for commands the cap has no right for", async () => {
    const readOnly = connect(await fs.subdir({ path: "", rights: ["read", "list"] }));
    expect(await readOnly({ command: "view", path: "/memories/survivor.md" })).toMatchObject({ isError: false });
    const refused = await readOnly({ command: "create", path: "/memories/new.md", file_text: "x" });
    expect(refused).toMatchObject({ isError: true, code: "forbidden" });
    expect(refused.text).toBe("Error: forbidden: this operation needs the write right (/memories/new.md)");
    await expect(fs.stat("new.md")).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("nothing leaks", () => {
  it("no result names the root prefix, the state folder or a host path", () => {
    expect(seen.length).toBeGreaterThan(100);
    for (const text of seen) {
      expect(text).not.toContain(PREFIX);
      expect(text).not.toContain(vault.state);
      expect(text).not.toContain(vault.vaultDiskRoot);
      expect(text).not.toContain("/object/");
    }
  });
});
