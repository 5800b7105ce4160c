/**
 * Sequences that once told the model, R2 and disk apart, replayed by name
 * by bisimulation.node.test.ts on every run, before the random ones.
 */
import type { CapArg, Command, PathArg, WriteCondition } from "./bisim-commands.ts";

const text = (t: string) => new TextEncoder().encode(t);
const pathArg = (t: string): PathArg => ({ text: t });
const write = (cap: CapArg, path: string, condition: WriteCondition = "none"): Command => ({
  kind: "write",
  cap,
  path: pathArg(path),
  content: text(path),
  condition,
});
const subdir = (cap: CapArg, path: string): Command => ({ kind: "subdir", cap, body: { path } });

const folder = (kind: "mkdir" | "rmdir", cap: CapArg, path: string): Command => ({ kind, cap, path: pathArg(path) });

/** Each ran differently on R2 and disk (or against the model) before its fix; kept so it never does again. */
export const KNOWN: [string, Command[]][] = [
  [
    "folders: made and listed while empty, kept by the last delete and move out, removed only while empty",
    [
      folder("mkdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      { kind: "list", cap: 0, path: pathArg("e/f") },
      { kind: "list", cap: 0, path: pathArg(""), depth: "0" },
      write(0, "e/f"),
      write(0, "e/f/g"),
      folder("rmdir", 0, "e/f"),
      { kind: "delete", cap: 0, path: pathArg("e/f/g") },
      { kind: "stat", cap: 0, path: pathArg("e/f") },
      folder("rmdir", 0, "e"),
      folder("rmdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      write(0, "m/n"),
      { kind: "move", cap: 0, body: { from: "m/n", to: "n" } },
      { kind: "list", cap: 0, path: pathArg("m") },
      folder("mkdir", 0, "n/x"),
      folder("mkdir", 0, "n"),
      folder("rmdir", 0, "n"),
      folder("rmdir", 0, ""),
      folder("mkdir", 0, ""),
      subdir(0, "k"),
      write(1, "z"),
      { kind: "delete", cap: 1, path: pathArg("z") },
      { kind: "list", cap: 0, path: pathArg("k") },
      { kind: "list", cap: 1, path: pathArg(""), depth: "2" },
      folder("rmdir", 0, "k"),
      { kind: "stat", cap: 0, path: pathArg("k") },
    ],
  ],
  [
    "quotas: a child's limits bind its writes, superseded and deleted bytes keep counting, looser limits are refused",
    [
      { kind: "subdir", cap: 0, body: { path: "q", maxBytes: 6, maxFiles: 2 } },
      { kind: "subdir", cap: 1, body: { path: "", maxBytes: 7 } },
      write(1, "aa"),
      write(1, "aa"),
      write(1, "bbb"),
      { kind: "info", cap: 1 },
      { kind: "delete", cap: 1, path: pathArg("aa") },
      write(1, "c"),
      write(0, "q/dd"),
      write(1, "bbb"),
      { kind: "move", cap: 1, body: { from: "bbb", to: "e" } },
      { kind: "subdir", cap: 1, body: { path: "", maxFiles: 1 } },
      write(3, "f"),
      { kind: "info", cap: 3 },
      { kind: "info", cap: 0 },
    ],
  ],
  [
    "a file below a cap's root whose name is a path only there (`c:`, `~x`) is listed, and a page may end on it",
    [
      write(0, "a b/c:"),
      write(0, "a b/~x"),
      write(0, "a b/~y"),
      { kind: "list", cap: 0, path: pathArg(""), limit: "1" },
      { kind: "list", cap: 0, path: pathArg("a b"), limit: "1" },
      subdir(0, "a b"),
      { kind: "list", cap: 1, path: pathArg("") },
    ],
  ],
  [
    "a weak If-Match names the same etag on R2 as on disk",
    [write(0, "a"), write(0, "a", "ifMatchWeak"), write(0, "a", "ifMatchList"), write(0, "a", "ifMatchBare")],
  ],
  [
    "a child cap whose root became a file cannot write beneath it",
    [subdir(0, "a"), write(0, "a"), write(1, "b"), { kind: "list", cap: 1, path: pathArg("") }, subdir(1, "")],
  ],
  [
    "a folder a child cap left empty (its root) does not block a file of that name",
    [
      write(0, "a/f"),
      subdir(0, "a"),
      { kind: "delete", cap: 1, path: pathArg("f") },
      write(0, "a"),
      { kind: "list", cap: 1, path: pathArg("") },
      write(1, "g"),
    ],
  ],
  [
    "a child root made by a refused write does not block a file or a move of that name",
    [
      subdir(0, "b"),
      write(1, "x", "ifMatchStale"),
      write(0, "b"),
      subdir(0, "c"),
      write(2, "x", "ifMatchStale"),
      write(0, "d"),
      { kind: "move", cap: 0, body: { from: "d", to: "c" } },
      { kind: "stat", cap: 0, path: pathArg("c") },
    ],
  ],
  [
    "a content type with a tab, or longer than 256 characters, comes back as stored",
    [
      { kind: "write", cap: 0, path: pathArg("t"), content: text("t"), contentType: "a\tb", condition: "none" },
      {
        kind: "write",
        cap: 0,
        path: pathArg("long"),
        content: text("l"),
        contentType: `text/plain; x=${"y".repeat(300)}`,
        condition: "none",
      },
      { kind: "stat", cap: 0, path: pathArg("t") },
      { kind: "read", cap: 0, path: pathArg("long"), condition: "none" },
    ],
  ],
  [
    "a listing resumed after its folder changed continues by name, and is empty once the folder is a file",
    [
      write(0, "d/1"),
      write(0, "d/2"),
      write(0, "d/3"),
      { kind: "list", cap: 0, path: pathArg("d"), limit: "1" },
      { kind: "delete", cap: 0, path: pathArg("d/2") },
      write(0, "d/0"),
      { kind: "resume" },
      { kind: "delete", cap: 0, path: pathArg("d/1") },
      { kind: "delete", cap: 0, path: pathArg("d/3") },
      { kind: "delete", cap: 0, path: pathArg("d/0") },
      { kind: "resume" },
      write(0, "d"),
      { kind: "resume" },
    ],
  ],
  [
    "a file's versions end with cursor null on a page that is exactly full",
    [
      write(0, "f"),
      write(0, "f"),
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "1" },
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "2" },
    ],
  ],
  [
    "a folder moves entry by entry: an empty one, one merged into a folder, a clash and into itself refused",
    [
      folder("mkdir", 0, "a"),
      { kind: "move", cap: 0, body: { from: "a", to: "b" } },
      { kind: "list", cap: 0, path: pathArg(""), depth: "0" },
      write(0, "s/x"),
      write(0, "s/t/y"),
      folder("mkdir", 0, "s/e"),
      write(0, "u/t/z"),
      { kind: "move", cap: 0, body: { from: "s", to: "u" } },
      { kind: "move", cap: 0, body: { from: "u", to: "u/v" } },
      { kind: "move", cap: 0, body: { from: "u/t", to: "u" } },
      { kind: "list", cap: 0, path: pathArg(""), depth: "0" },
      { kind: "list", cap: 0, path: pathArg("u/e") },
      write(0, "w/x"),
      { kind: "move", cap: 0, body: { from: "w", to: "u" } },
      { kind: "move", cap: 0, body: { from: "w", to: "u", overwrite: true } },
      { kind: "versions", cap: 0, path: pathArg("u/x") },
      { kind: "stat", cap: 0, path: pathArg("w") },
    ],
  ],
];
