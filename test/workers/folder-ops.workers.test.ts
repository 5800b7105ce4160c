import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { deleteFolderTree, FOLDER_OP_LIMIT, moveFolderTree } from "../../worker/folder-ops.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";
import { versionsOf } from "./versions-client.ts";

// Whole folders through the HTTP API: `DELETE /folder?recursive=true` and
// `POST /move` of a folder, entry by entry through the cap's own calls,
// bounded, refused whole past the bound, and finished by asking again.

type Cap = ReturnType<typeof cap>;
let counter = 0;

const rmtree = (c: Cap, path: string, flag = "true") =>
  call("DELETE", `/object/${c.token}/folder?path=${encodeURIComponent(path)}&recursive=${flag}`);

/** Every file below `path`, as depth=0 names them (one page holds them all here). */
async function filesBelow(c: Cap, path = ""): Promise<string[]> {
  const res = await c.list(path, "&depth=0");
  if (res.status === 404) return [];
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: { name: string }[] }).entries.map((e) => e.name);
}

/** The cap's object for a token, as the worker addresses it: to run a folder operation with a step hook. */
async function stubOf(token: string) {
  return capObjectStub(env, (await digestToken(token)).key);
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function rootWith(files: string[]) {
    const root = cap((await mintRoot(`folder-ops/${backend}/${++counter}/`, { backend })).token);
    // Written 50 at a time: the bound's test needs 201 files on each backend.
    for (let i = 0; i < files.length; i += 50) {
      const batch = files.slice(i, i + 50);
      const written = await Promise.all(batch.map((path) => root.write(path, `bytes of ${path}`)));
      expect(written.map((r) => r.status)).toEqual(batch.map(() => 201));
    }
    return root;
  }

  it("deletes a folder and everything below it, each file journaled as a delete; its parent stays", async () => {
    const root = await rootWith(["keep.txt", "d/a.txt", "d/sub/b.txt", "d/sub/deep/c.txt"]);
    expect((await root.makeFolder("d/empty")).status).toBe(204);
    const before = (await (await root.info()).json()) as { usage: { files: number } };
    const res = await rmtree(root, "d/");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: { files: 3, folders: 4 } });
    expect(await errorCode(await root.stat("d"))).toBe("not_found");
    expect(await filesBelow(root)).toEqual(["keep.txt"]);
    expect((await versionsOf(root, "d/sub/deep/c.txt"))[0]?.operation).toBe("deleted");
    const after = (await (await root.info()).json()) as { usage: { files: number } };
    expect(after.usage.files).toBe(before.usage.files - 3);
    // The folder holding it stays, as after a single delete.
    const nested = await rootWith(["p/q/r.txt"]);
    expect((await rmtree(nested, "p/q")).status).toBe(200);
    expect(await (await nested.stat("p")).json()).toEqual({ type: "dir" });
  });

  it("refuses bad flags, files, the root, and caps without delete or list, changing nothing", async () => {
    const root = await rootWith(["d/a.txt", "f.txt"]);
    expect(await errorCode(await rmtree(root, "d", "yes"))).toBe("bad_request");
    expect(await errorCode(await rmtree(root, "f.txt"))).toBe("conflict");
    expect(await errorCode(await rmtree(root, ""))).toBe("invalid_path");
    expect(await errorCode(await rmtree(root, "missing"))).toBe("not_found");
    const noDelete = await child(root, { path: "", rights: ["read", "list"] });
    expect(await errorCode(await rmtree(noDelete, "d"))).toBe("forbidden");
    const noList = await child(root, { path: "", rights: ["read", "delete"] });
    expect(await errorCode(await rmtree(noList, "d"))).toBe("forbidden");
    // Without the flag, a folder that holds something is not deleted.
    expect(await errorCode(await rmtree(root, "d", "false"))).toBe("conflict");
    expect(await filesBelow(root)).toEqual(["d/a.txt", "f.txt"]);
  });

  it("refuses a folder over the bound whole, for delete and move", async () => {
    const root = await rootWith(["big/a", "big/b", "big/s/c"]);
    const stub = await stubOf(root.token);
    for (const op of [
      deleteFolderTree(stub as never, "big", { limit: 3 }),
      moveFolderTree(stub as never, "big", "moved", false, { limit: 3 }),
    ]) {
      const refused = await op;
      expect(refused.ok ? "ok" : refused.error).toEqual({
        code: "too_large",
        message:
          "a folder deleted or moved in one request holds at most 3 entries; nothing was changed (do its subfolders first)",
      });
    }
    expect(await filesBelow(root, "big")).toEqual(["a", "b", "s/c"]);
    expect(await errorCode(await root.stat("moved"))).toBe("not_found");
    // Through HTTP, at the real bound.
    const names = Array.from({ length: FOLDER_OP_LIMIT + 1 }, (_, i) => `big/f${String(i).padStart(3, "0")}`);
    const full = await rootWith(names);
    const gone = await rmtree(full, "big");
    expect(gone.status).toBe(413);
    expect(await errorCode(gone)).toBe("too_large");
    expect(await errorCode(await full.move({ from: "big", to: "moved" }))).toBe("too_large");
    expect((await filesBelow(full, "big")).length).toBe(FOLDER_OP_LIMIT + 1);
  });

  it("moves a folder: every file moved and journaled as a move, the source folders gone", async () => {
    const root = await rootWith(["a/x.txt", "a/s/y.txt", "other.txt"]);
    expect((await root.makeFolder("a/empty")).status).toBe(204);
    const res = await root.move({ from: "a", to: "n/b" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ from: "a", to: "n/b", moved: { files: 2, folders: 3 } });
    expect(await filesBelow(root)).toEqual(["n/b/s/y.txt", "n/b/x.txt", "other.txt"]);
    expect(await (await root.stat("n/b/empty")).json()).toEqual({ type: "dir" });
    expect(await errorCode(await root.stat("a"))).toBe("not_found");
    expect(await (await root.read("n/b/s/y.txt")).text()).toBe("bytes of a/s/y.txt");
    expect((await versionsOf(root, "a/s/y.txt"))[0]?.operation).toBe("moved");
    // A file move answers as before, with no count.
    expect(await (await root.move({ from: "other.txt", to: "o.txt" })).json()).toEqual({
      from: "other.txt",
      to: "o.txt",
    });
  });

  it("refuses a move into its own subtree or onto a folder holding it, and clashes in a folder it merges into", async () => {
    const root = await rootWith(["a/x.txt", "a/s/y.txt", "t/s/y.txt", "u/z.txt", "f"]);
    const all = await filesBelow(root);
    expect(await errorCode(await root.move({ from: "a", to: "a/s/inner" }))).toBe("conflict");
    expect(await errorCode(await root.move({ from: "a", to: "a" }))).toBe("conflict");
    expect(await errorCode(await root.move({ from: "a/s", to: "a" }))).toBe("conflict");
    expect(await errorCode(await root.move({ from: "a", to: "" }))).toBe("invalid_path");
    expect(await errorCode(await root.move({ from: "a", to: "f" }))).toBe("conflict");
    // a/s/y.txt would land on t/s/y.txt, after a/x.txt moved: refused before anything moves.
    expect(await errorCode(await root.move({ from: "a", to: "t" }))).toBe("conflict");
    expect(await filesBelow(root)).toEqual(all);
    // Into an existing folder without clashes: merged. With overwrite, a clash is replaced.
    expect((await root.move({ from: "u", to: "a/s" })).status).toBe(200);
    expect(await filesBelow(root, "a")).toEqual(["s/y.txt", "s/z.txt", "x.txt"]);
    expect((await root.move({ from: "a", to: "t", overwrite: true })).status).toBe(200);
    expect(await filesBelow(root)).toEqual(["f", "t/s/y.txt", "t/s/z.txt", "t/x.txt"]);
    expect(await (await root.read("t/s/y.txt")).text()).toBe("bytes of a/s/y.txt");
  });

  it("keeps a subdir cap inside its root on both ends of a folder move", async () => {
    const root = await rootWith(["home/a/x.txt", "elsewhere/y.txt"]);
    const home = await child(root, { path: "home" });
    expect(await errorCode(await home.move({ from: "a", to: "../out" }))).toBe("path_escapes");
    expect(await errorCode(await home.move({ from: "../elsewhere", to: "b" }))).toBe("path_escapes");
    expect(await errorCode(await home.move({ from: "/a", to: "b" }))).toBe("absolute_path");
    expect(await errorCode(await rmtree(home, "../elsewhere"))).toBe("path_escapes");
    expect(await filesBelow(root)).toEqual(["elsewhere/y.txt", "home/a/x.txt"]);
    const writeOnly = await child(root, { path: "home", rights: ["write", "list"] });
    expect(await errorCode(await writeOnly.move({ from: "a", to: "b" }))).toBe("forbidden");
  });

  it("stops at revocation mid-delete and mid-move; what is left is visible, and the parent finishes it", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `w/d/f${i}.txt`);
    const root = await rootWith([...names, "w/m/a.txt", "w/m/b.txt", "w/m/c.txt"]);
    const worker = await child(root, { path: "w" });
    const stub = await stubOf(worker.token);
    const revokeAt = (n: number) => async (i: number) => {
      if (i === n) expect((await worker.revoke()).status).toBe(204);
    };
    const cut = await deleteFolderTree(stub as never, "d", { onStep: revokeAt(2) });
    expect(cut.ok ? "ok" : cut.error.code).toBe("no_such_cap");
    expect(await filesBelow(root, "w/d")).toEqual(["f2.txt", "f3.txt", "f4.txt", "f5.txt"]);
    expect((await rmtree(root, "w/d")).status).toBe(200);
    expect(await errorCode(await root.stat("w/d"))).toBe("not_found");

    const mover = await child(root, { path: "w" });
    const moved = await moveFolderTree((await stubOf(mover.token)) as never, "m", "n", false, {
      onStep: async (i) => {
        if (i === 1) expect((await mover.revoke()).status).toBe(204);
      },
    });
    expect(moved.ok ? "ok" : moved.error.code).toBe("no_such_cap");
    expect(await filesBelow(root, "w")).toEqual(["m/b.txt", "m/c.txt", "n/a.txt"]);
    // Sent again (by a cap still alive), the move merges the rest in: nothing lands on a moved file.
    expect((await root.move({ from: "w/m", to: "w/n" })).status).toBe(200);
    expect(await filesBelow(root, "w")).toEqual(["n/a.txt", "n/b.txt", "n/c.txt"]);
  });
});
