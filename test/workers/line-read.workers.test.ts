import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { LINES_MAX, readLines } from "../../worker/line-read.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

// `GET /lines?path=&offset=&limit=`: a window of a text file's lines, with the
// file's line count, split on `\n` bytes and decoded strictly, on both backends.

let counter = 0;
type Cap = ReturnType<typeof cap>;

const lines = (c: Cap, path: string, query = "") =>
  call("GET", `/object/${c.token}/lines?path=${encodeURIComponent(path)}${query}`);

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function root() {
    return cap((await mintRoot(`line-read/${backend}/${++counter}/`, { backend })).token);
  }

  it("returns a window of lines with the total count and where to go on; CR stays, LF goes", async () => {
    const c = await root();
    expect((await c.write("t.txt", "één\nb\r\n😀 c\nd")).status).toBe(201);
    const first = await lines(c, "t.txt", "&offset=1&limit=2");
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ lines: ["één", "b\r"], offset: 1, totalLines: 4, nextOffset: 3, size: 17 });
    expect(await (await lines(c, "t.txt", "&offset=3")).json()).toEqual({
      lines: ["😀 c", "d"],
      offset: 3,
      totalLines: 4,
      nextOffset: null,
      size: 17,
    });
    // A last line ended by `\n` adds no empty line; an empty file has none, and offset 1 still reads it.
    expect((await c.write("n.txt", "a\nb\n")).status).toBe(201);
    expect(await (await lines(c, "n.txt")).json()).toMatchObject({
      lines: ["a", "b"],
      totalLines: 2,
      nextOffset: null,
    });
    expect((await c.write("e.txt", "")).status).toBe(201);
    expect(await (await lines(c, "e.txt")).json()).toEqual({
      lines: [],
      offset: 1,
      totalLines: 0,
      nextOffset: null,
      size: 0,
    });
  });

  it("refuses bad windows, ranges past the end, non-UTF-8, folders and caps without read, with typed errors", async () => {
    const c = await root();
    expect((await c.write("t.txt", "a\nb\n")).status).toBe(201);
    for (const query of ["&offset=0", "&limit=0", "&limit=2001", "&offset=x", "&offset=-1", "&limit=1.5"]) {
      const res = await lines(c, "t.txt", query);
      expect([res.status, await errorCode(res)]).toEqual([400, "bad_request"]);
    }
    const past = await lines(c, "t.txt", "&offset=3");
    expect([past.status, await errorCode(past)]).toEqual([416, "range_not_satisfiable"]);
    expect((await c.write("bin", new Uint8Array([0x61, 0x0a, 0xff, 0xfe]))).status).toBe(201);
    expect(await errorCode(await lines(c, "bin", "&offset=2"))).toBe("conflict");
    // Only the window is decoded: the text line before the bad bytes reads.
    expect(await (await lines(c, "bin", "&limit=1")).json()).toMatchObject({ lines: ["a"], nextOffset: 2 });
    expect((await c.makeFolder("d")).status).toBe(204);
    expect(await errorCode(await lines(c, "d"))).toBe("conflict");
    expect(await errorCode(await lines(c, "../t.txt"))).toBe("path_escapes");
    const listOnly = await child(c, { path: "", rights: ["list"] });
    expect(await errorCode(await lines(listOnly, "t.txt"))).toBe("forbidden");
  });

  it("ends a window early at the answer's byte bound, and refuses a single line past it", async () => {
    const c = await root();
    const stub = capObjectStub(env, (await digestToken(c.token)).key) as never;
    expect((await c.write("wide.txt", "aaaa\nbbbb\ncc\n")).status).toBe(201);
    // A bound of 10 bytes holds "aaaa\nbbbb\n" and no more.
    const page = await readLines(stub, env as never, "wide.txt", { offset: 1, limit: 3 }, 10);
    expect(page.ok && page.value).toMatchObject({ lines: ["aaaa", "bbbb"], nextOffset: 3, totalLines: 3 });
    const tight = await readLines(stub, env as never, "wide.txt", { offset: 1, limit: 3 }, 7);
    expect(tight.ok && tight.value).toMatchObject({ lines: ["aaaa"], nextOffset: 2 });
    const long = await readLines(stub, env as never, "wide.txt", { offset: 2, limit: 1 }, 4);
    expect(long.ok ? "ok" : long.error).toEqual({
      code: "too_large",
      message: "that line is over 4 bytes; read bytes with Range",
    });
    expect(await errorCode(await lines(c, "wide.txt", `&limit=${LINES_MAX}`))).toBe("(no error; status 200)");
  });
});
