import type { Right } from "../../shared/rights.ts";
import type {
  CapInfo,
  ChildPage,
  ChildView,
  FolderCount,
  LinesPage,
  ListEntry,
  ListPage,
  MintedCap,
  SearchPage,
  Stat,
  VersionPage,
  WatchEvent,
  WriteResult,
} from "../../shared/wire-types.ts";
import { parseCapUrl } from "./cap-url.ts";
import { type WatchOptions, watchChanges } from "./cap-watch.ts";
import { infoOf, listPageOf, moveCall, openWatch, revokeCap, statOf } from "./fs-cap-calls.ts";
import { childrenPageOf, childUrl, everyChild, revokeChildOf, subdirRequest } from "./fs-cap-delegation.ts";
import { everyEntry, openFile, pathCall, putFile } from "./fs-cap-files.ts";
import { type SearchOptions, searchPage } from "./fs-cap-search.ts";
import { type LinesOptions, linesPage, removeTreeCall } from "./fs-cap-trees.ts";
import { redactVersion, restoreVersion, versionBytes, versionsPage } from "./fs-cap-versions.ts";
import type { HolderKey } from "./holder.ts";
import type {
  CapOptions,
  FetchLike,
  ListPageOptions,
  MoveOptions,
  ReadOptions,
  ReadStreamResult,
  RevokeResult,
  SubdirOptions,
  WriteData,
  WriteOptions,
} from "./types.ts";
import { VaultTransport } from "./vault-transport.ts";

/** What is known about a cap without asking: filled in by `info()`, `subdir()` or `mintRoot()`. */
interface KnownMeta {
  id?: string;
  rights?: Right[];
  expiresAt?: string | null;
}

/** Internal: lets `AdminClient` hand out an `FsCap` that already knows its id and rights. */
export let capFromMinted: (
  minted: MintedCap,
  mount: string,
  fetchImpl: FetchLike | undefined,
  holder?: HolderKey,
) => FsCap;

/**
 * A capability to one folder of the vault. Every path is relative to the
 * cap's root and is sent as data exactly as given; the vault, not the SDK,
 * decides whether it is acceptable, so a hostile path comes back as a
 * `CapError` with the wire code (`path_escapes`, `absolute_path`, …).
 *
 * The cap URL is a secret. `String(cap)`, `JSON.stringify(cap)` and
 * `console.log(cap)` show only the public id; read {@link FsCap.url} to hand
 * the cap to someone on purpose.
 *
 * @example
 * const fs = new FsCap(process.env.CAPVAULT_CAP!);
 * await fs.write("notes/today.md", "# Today\n");
 * console.log(await fs.readText("notes/today.md"));
 * for await (const entry of fs.list("notes")) console.log(entry.name, entry.type);
 */
export class FsCap {
  readonly #base: string;
  readonly #mount: string;
  readonly #fetch: FetchLike | undefined;
  readonly #http: VaultTransport;
  #known: KnownMeta = {};

  static {
    capFromMinted = (minted, mount, fetchImpl, holder) => {
      const cap = new FsCap(childUrl(minted, mount), { ...(fetchImpl ? { fetch: fetchImpl } : {}), holder });
      cap.#known = { id: minted.id, rights: minted.rights, expiresAt: minted.expiresAt };
      return cap;
    };
  }

  /**
   * @param url `<origin>/object/<token>`, optionally with a trailing slash.
   * @param options `fetch` replaces `globalThis.fetch` (tests, Worker service bindings).
   * @example
   * const fs = new FsCap("http://127.0.0.1:8787/object/abcdefghijklmnopqrstuvwxyz234567");
   */
  constructor(url: string, options: CapOptions = {}) {
    const { mount, token } = parseCapUrl(url);
    this.#mount = mount;
    this.#base = `${mount}/object/${token}`;
    this.#fetch = options.fetch;
    this.#http = new VaultTransport(options.fetch, [token], options.holder && { key: options.holder, token });
  }

  /**
   * The cap URL: a bearer secret. Give it only to whoever should hold the cap.
   * @example
   * const sub = await fs.subdir({ path: "skills", rights: ["read", "list"] });
   * spawnAgent({ env: { CAPVAULT_CAP: sub.url } });
   */
  get url(): string {
    return this.#base;
  }

  /** The public id, once known (after `info()`, or for caps returned by `subdir()` / `mintRoot()`). */
  get id(): string | undefined {
    return this.#known.id;
  }

  /** The cap's rights, once known. */
  get rights(): Right[] | undefined {
    return this.#known.rights?.slice();
  }

  /** ISO 8601 expiry (`null`: never), once known. */
  get expiresAt(): string | null | undefined {
    return this.#known.expiresAt;
  }

  /**
   * Reads a whole file into memory. With `ifNoneMatch`, resolves `null` when
   * the file still has that etag. For large files prefer {@link readStream}.
   * @example
   * const bytes = await fs.read("images/logo.png");
   * const head = await fs.read("big.bin", { range: { start: 0, end: 1023 } }); // first KiB
   */
  read(path: string, options?: ReadOptions & { ifNoneMatch?: undefined }): Promise<Uint8Array>;
  read(path: string, options: ReadOptions & { ifNoneMatch: string }): Promise<Uint8Array | null>;
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array | null> {
    const result = await this.readStream(path, options);
    if (result.notModified) return null;
    return new Uint8Array(await new Response(result.body).arrayBuffer());
  }

  /**
   * Reads a file as UTF-8 text (invalid sequences become U+FFFD).
   * @example
   * const skill = await fs.readText("hermes-fs-as-cap/SKILL.md");
   */
  readText(path: string, options?: ReadOptions & { ifNoneMatch?: undefined }): Promise<string>;
  readText(path: string, options: ReadOptions & { ifNoneMatch: string }): Promise<string | null>;
  async readText(path: string, options: ReadOptions = {}): Promise<string | null> {
    // The overloads above carry the null-only-with-ifNoneMatch typing; here both cases are one call.
    const bytes = await this.read(path, options as ReadOptions & { ifNoneMatch: string });
    return bytes === null ? null : new TextDecoder().decode(bytes);
  }

  /**
   * Opens a file as a stream, without buffering it. The caller must consume
   * or cancel `body`.
   * @example
   * const file = await fs.readStream("video.mp4");
   * if (!file.notModified) await file.body.pipeTo(destination);
   */
  async readStream(path: string, options: ReadOptions = {}): Promise<ReadStreamResult> {
    return openFile(this.#http, this.#base, path, options);
  }

  /**
   * Creates or replaces a file. A `ReadableStream` needs `options.length`.
   * @example
   * await fs.write("notes/a.md", "hello");                                  // create or replace
   * await fs.write("notes/a.md", "v2", { ifMatch: etagFromEarlierRead });  // only if unchanged
   * await fs.write("lock", "", { ifNoneMatch: "*" });                       // only if absent
   */
  async write(path: string, data: WriteData, options: WriteOptions = {}): Promise<WriteResult> {
    return putFile(this.#http, this.#base, path, data, options);
  }

  /**
   * Describes a file or folder; `""` (the default) is the cap's root.
   * @example
   * const s = await fs.stat("notes/a.md");
   * if (s.type === "file") console.log(s.size, s.etag);
   */
  async stat(path = ""): Promise<Stat> {
    return statOf(this.#http, this.#base, path);
  }

  /**
   * One page of a folder listing, sorted by UTF-8 bytes of the name.
   * @example
   * let page = await fs.listPage("notes", { limit: 100 });
   * while (page.cursor) page = await fs.listPage("notes", { cursor: page.cursor, limit: 100 });
   */
  async listPage(path = "", options: ListPageOptions = {}): Promise<ListPage> {
    return listPageOf(this.#http, this.#base, path, options);
  }

  /**
   * Every entry of a folder, following cursors across pages.
   * @example
   * for await (const entry of fs.list("notes")) {
   *   console.log(entry.type === "dir" ? `${entry.name}/` : entry.name);
   * }
   * for await (const file of fs.list("notes", { depth: 0 })) console.log(file.name, file.sha256); // every file below
   */
  async *list(path = "", options: { limit?: number; depth?: number } = {}): AsyncGenerator<ListEntry, void, undefined> {
    yield* everyEntry((cursor) => this.listPage(path, { cursor, limit: options.limit, depth: options.depth }));
  }

  /**
   * Deletes a file; the folder it was in stays, even once empty (`removeFolder` removes it).
   * @example
   * await fs.delete("notes/old.md");
   */
  async delete(path: string): Promise<void> {
    await pathCall(this.#http, "DELETE", `${this.#base}/file`, path, [200, 204]);
  }

  /**
   * Makes a folder (and any missing above it) that stays while empty; an existing one is success.
   * @example
   * await fs.makeFolder("notes/2026");
   */
  async makeFolder(path: string): Promise<void> {
    await pathCall(this.#http, "PUT", `${this.#base}/folder`, path, [204]);
  }

  /**
   * Removes an empty folder (a `conflict` while it holds anything). Needs the delete right.
   * @example
   * await fs.removeFolder("notes/2026");
   */
  async removeFolder(path: string): Promise<void> {
    await pathCall(this.#http, "DELETE", `${this.#base}/folder`, path, [204]);
  }

  /**
   * Deletes a folder and everything below it (needs delete and list): at most
   * 20 entries, else `too_large` and nothing deleted. Answers what it deleted.
   * @example
   * const { files, folders } = await fs.removeTree("skills/old");
   */
  async removeTree(path: string): Promise<FolderCount> {
    return removeTreeCall(this.#http, this.#base, path);
  }

  /**
   * One window of a text file's lines (needs read), with the file's line count.
   * @example
   * const { lines, totalLines, nextOffset } = await fs.readLines("log.txt", { offset: 100, limit: 50 });
   */
  async readLines(path: string, options: LinesOptions = {}): Promise<LinesPage> {
    return linesPage(this.#http, this.#base, path, options);
  }

  /**
   * Moves a file, or a folder (at most 20 entries; merged into an existing
   * folder, refused if a file would land on a file). An existing destination
   * file is a `conflict` unless `overwrite`. Needs the write and delete rights (and list for a folder).
   * @example
   * await fs.move("drafts/a.md", "published/a.md");
   * await fs.move("a.tmp", "a.json", { overwrite: true });
   */
  async move(from: string, to: string, options: MoveOptions = {}): Promise<void> {
    await moveCall(this.#http, this.#base, from, to, options);
  }

  /**
   * Mints a child cap for a folder under this one, with at most this cap's
   * rights and expiry. The returned cap knows its id, rights and expiry; its
   * {@link FsCap.url} is what you delegate.
   * @example
   * const skills = await fs.subdir({ path: "skills", rights: ["read", "list"], ttlSeconds: 3600, label: "sub-agent" });
   * await skills.readText("hermes-fs-as-cap/SKILL.md");
   */
  async subdir(options: SubdirOptions): Promise<FsCap> {
    const { json, holder } = subdirRequest(options);
    const response = await this.#http.send({ method: "POST", url: `${this.#base}/subdir`, json, expect: [200, 201] });
    const minted = await this.#http.json<MintedCap>(response);
    return capFromMinted(minted, this.#mount, this.#fetch, holder);
  }

  /**
   * The caps minted directly from this one, following cursors across pages.
   * @example
   * for (const child of await fs.children()) console.log(child.id, child.path, child.rights);
   */
  async children(options: { limit?: number } = {}): Promise<ChildView[]> {
    return everyChild((cursor) => this.childrenPage({ cursor, limit: options.limit }));
  }

  /**
   * One page of the caps minted directly from this one, in creation order.
   * @example
   * let page = await fs.childrenPage({ limit: 100 });
   * while (page.cursor) page = await fs.childrenPage({ cursor: page.cursor, limit: 100 });
   */
  async childrenPage(options: ListPageOptions = {}): Promise<ChildPage> {
    return childrenPageOf(this.#http, this.#base, options);
  }

  /**
   * Revokes one child (and everything minted from it) by id.
   * @example
   * await fs.revokeChild(sub.id!);
   */
  async revokeChild(id: string): Promise<void> {
    await revokeChildOf(this.#http, this.#base, id);
  }

  /**
   * One page of a content search below a folder (needs `read` and `list`): RE2 regular expressions, bounded work per page.
   * @example
   * const { matches, cursor } = await fs.search("TODO\\b", { path: "src", glob: "*.ts", context: 1 });
   */
  async search(pattern: string, options: SearchOptions = {}): Promise<SearchPage> {
    return searchPage(this.#http, this.#base, pattern, options);
  }

  /**
   * One page of a file's versions, newest first (needs `read`). A deleted
   * file keeps its history: its newest version is the `deleted` one.
   * @example
   * const { versions } = await fs.versions("notes/a.md");
   * const before = versions.find((v) => v.operation !== "deleted" && !v.redacted);
   */
  async versions(path: string, options: ListPageOptions = {}): Promise<VersionPage> {
    return versionsPage(this.#http, this.#base, path, options);
  }

  /**
   * The bytes of one version (needs `read`).
   * @example
   * const old = new TextDecoder().decode(await fs.readVersion(versions[1].id));
   */
  async readVersion(id: string): Promise<Uint8Array> {
    return versionBytes(this.#http, this.#base, id);
  }

  /**
   * Writes a version's bytes back to its path, as a new version (needs `read` and `write`).
   * @example
   * await fs.restore(deleted.id); // the deleted file is back
   */
  async restore(id: string): Promise<Omit<WriteResult, "created"> & { path: string }> {
    return restoreVersion(this.#http, this.#base, id);
  }

  /**
   * Destroys a version's bytes for good; its record stays, marked `redacted` (needs `delete`).
   * @example
   * await fs.redact(leaked.id);
   */
  async redact(id: string): Promise<void> {
    await redactVersion(this.#http, this.#base, id);
  }

  /**
   * The changes inside this cap's subtree as they are committed (needs
   * `read`): first those after `since`, then live, reconnecting on its own
   * when the vault asks it to. Ends with the vault's CapError (`no_such_cap`)
   * when the cap is revoked or expires, and quietly when `signal` aborts.
   * @example
   * for await (const change of fs.watch({ since: lastSeen, signal })) console.log(change.operation, change.path);
   */
  watch(options: WatchOptions = {}): AsyncIterableIterator<WatchEvent> {
    const open = (since: string | undefined, signal: AbortSignal | undefined) =>
      openWatch(this.#http, this.#base, since, signal);
    return watchChanges({ open, alive: () => this.info() }, options);
  }

  /**
   * Revokes this cap and every cap derived from it. Files are untouched.
   * @example
   * const { complete } = await sub.revoke();
   */
  async revoke(): Promise<RevokeResult> {
    return revokeCap(this.#http, this.#base);
  }

  /**
   * What this cap is: id, rights, label, dates, parent id. Needs no right.
   * @example
   * const { id, rights, expiresAt } = await fs.info();
   */
  async info(): Promise<CapInfo> {
    const info = await infoOf(this.#http, this.#base);
    this.#known = { id: info.id, rights: info.rights, expiresAt: info.expiresAt };
    return info;
  }

  /** `FsCap(<id>)` once the id is known, else `FsCap(…)`; never the token. */
  toString(): string {
    return `FsCap(${this.#known.id ?? "…"})`;
  }

  toJSON(): { type: "FsCap"; id: string | null } {
    return { type: "FsCap", id: this.#known.id ?? null };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}
