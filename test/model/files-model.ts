/** The model's files and folders: read, write, delete, mkdir, rmdir, stat, list, move. */
import { createHash } from "node:crypto";
import { etagListMatches, parseByteRange, writeAllowed } from "../../shared/http-conditions.ts";
import { MAX_KEY_BYTES, utf8Length } from "../../shared/rel-path.ts";
import type { Right } from "../../shared/rights.ts";
import { compareUtf8 } from "../../shared/utf8-order.ts";
import { CapsModel } from "./caps-model.ts";
import { type FolderSteps, moveFolderModel } from "./folder-move-model.ts";
import type { ModelBlob } from "./journal-model.ts";
import type { CapPick, Json, ModelAnswer, VaultRequest } from "./model-requests.ts";
import {
  contentOf,
  DEFAULT_CONTENT_TYPE,
  empty,
  error,
  etagFor,
  fileKey,
  hex,
  json,
  MODEL_CURSOR,
  md5Hex,
  namesItself,
  noSuchCap,
  type Outcome,
  parseFilePath,
  parseJsonBody,
  parseLimit,
} from "./model-state.ts";

export abstract class FilesModel extends CapsModel {
  protected read(request: VaultRequest & { op: "read" }): ModelAnswer {
    const access = this.authorize(request.cap, ["read"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    const file = this.files.get(key.value);
    if (!file) return { observation: this.isDir(key.value) ? error("conflict") : error("not_found") };
    const validators = { etag: `"${file.etag}"`, "last-modified": "<time>", "accept-ranges": "bytes" };
    if (request.ifNoneMatch && etagListMatches(request.ifNoneMatch, file.etag)) {
      return { observation: { status: 304, headers: validators, body: null } };
    }
    const size = file.bytes.length;
    const range = parseByteRange(request.range, size);
    if (range === "unsatisfiable") {
      return { observation: error("range_not_satisfiable", { ...validators, "content-range": `bytes */${size}` }) };
    }
    const bytes = range ? file.bytes.subarray(range.start, range.end + 1) : file.bytes;
    const headers: Record<string, string> = {
      ...validators,
      "content-type": file.contentType,
      "content-length": String(bytes.length),
    };
    if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
    return { observation: { status: range ? 206 : 200, headers, body: { bytes: hex(bytes) } } };
  }

  protected write(request: VaultRequest & { op: "write" }): ModelAnswer {
    const access = this.authorize(request.cap, ["write"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    // Without read, a condition may only be `*`: an etag would test guesses at the content.
    const conditions = [request.ifMatch, request.ifNoneMatch].filter((h) => h !== undefined);
    if (!access.value.cap.rights.includes("read") && conditions.some((h) => h.trim() !== "*"))
      return { observation: error("forbidden") };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    // Quotas are checked before storage is: before any conflict or condition.
    for (const rule of access.value.cap.quotas) {
      const used = this.usage(rule.prefix);
      if (rule.maxBytes !== null && used.bytes + request.content.length > rule.maxBytes)
        return { observation: error("quota_exceeded") };
      if (rule.maxFiles !== null && used.files + (this.files.has(key.value) ? 0 : 1) > rule.maxFiles)
        return { observation: error("quota_exceeded") };
    }
    // A file where a folder is needed, anywhere above it (the cap's own root included), or the reverse.
    if (this.someAncestorIsFile(key.value)) return { observation: error("conflict") };
    if (this.isDir(key.value)) return { observation: error("conflict") };
    const current = this.files.get(key.value) ?? null;
    if (!writeAllowed({ ifMatch: request.ifMatch, ifNoneMatch: request.ifNoneMatch }, current)) {
      return { observation: error("precondition_failed") };
    }
    const etag = md5Hex(request.content);
    const sha256 = createHash("sha256").update(request.content).digest("hex");
    if (current) this.supersede(key.value, current);
    const bytes = request.content.slice();
    const file = { bytes, etag, sha256, contentType: request.contentType || DEFAULT_CONTENT_TYPE };
    const blob: ModelBlob = { bytes, redacted: false };
    this.files.set(key.value, { ...file, blob });
    const { cap } = access.value;
    this.journal.write(this.journalPath(key.value), !current, { ...file, size: bytes.length, blob }, cap.role);
    return {
      observation: {
        status: current ? 200 : 201,
        headers: { "content-type": "application/json", etag: `"${etag}"` },
        body: { size: request.content.length, etag, sha256 },
      },
    };
  }

  protected remove(request: VaultRequest & { op: "delete" }): ModelAnswer {
    const access = this.authorize(request.cap, ["delete"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    const gone = this.files.get(key.value);
    if (!gone) return { observation: this.isDir(key.value) ? error("conflict") : error("not_found") };
    this.supersede(key.value, gone);
    this.keepParentOf(key.value);
    this.files.delete(key.value);
    this.journal.remove(this.journalPath(key.value), contentOf(gone), access.value.cap.role);
    return { observation: empty(204) };
  }

  /** The folder a checked `childRoot` path names: its key without the `/`, or the refusal. */
  protected folderKey(request: VaultRequest & { op: "mkdir" | "rmdir" }, right: Right): Outcome<string> {
    const access = this.authorize(request.cap, [right], request.path, { rootAllowed: true, fault: request.queryFault });
    if (!access.ok) return access;
    const { cap, path } = access.value;
    const rootKey = cap.levels.join("");
    // Checked as a new root would be: the prefix with its `/` stays under the key limit.
    if (path.text !== "" && utf8Length(`${rootKey}${path.text}/`) >= MAX_KEY_BYTES)
      return { ok: false, observation: error("invalid_path") };
    if (path.segments.length === 0) return { ok: false, observation: error("invalid_path") };
    return { ok: true, value: `${rootKey}${path.text}` };
  }

  protected mkdir(request: VaultRequest & { op: "mkdir" }): ModelAnswer {
    const key = this.folderKey(request, "write");
    if (!key.ok) return { observation: key.observation };
    if (this.files.has(key.value) || this.someAncestorIsFile(key.value)) return { observation: error("conflict") };
    this.dirs.add(key.value);
    return { observation: empty(204) };
  }

  protected rmdir(request: VaultRequest & { op: "rmdir" }): ModelAnswer {
    const key = this.folderKey(request, "delete");
    if (!key.ok) return { observation: key.observation };
    if (this.files.has(key.value)) return { observation: error("conflict") };
    if (!this.isDir(key.value)) return { observation: error("not_found") };
    const inside = `${key.value}/`;
    const holds =
      [...this.files.keys()].some((k) => k.startsWith(inside)) || [...this.dirs].some((d) => d.startsWith(inside));
    if (holds) return { observation: error("conflict") };
    this.dirs.delete(key.value);
    this.keepParentOf(key.value);
    return { observation: empty(204) };
  }

  protected stat(request: VaultRequest & { op: "stat" }): ModelAnswer {
    const access = this.authorize(request.cap, ["read", "list"], request.path, {
      any: true,
      rootAllowed: true,
      fault: request.queryFault,
    });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    if (path.segments.length === 0) return { observation: json(200, { type: "dir" }) };
    const key = fileKey(cap, path);
    if (!key.ok) return { observation: key.observation };
    const file = this.files.get(key.value);
    if (file) {
      return {
        // The etag (an unkeyed content hash) only for a cap that may read.
        observation: json(200, {
          type: "file",
          size: file.bytes.length,
          ...etagFor(cap, file),
          modified: "<time>",
          contentType: file.contentType,
        }),
      };
    }
    return { observation: this.isDir(key.value) ? json(200, { type: "dir" }) : error("not_found") };
  }

  protected list(request: VaultRequest & { op: "list" }): ModelAnswer {
    const access = this.authorize(request.cap, ["list"], request.path, {
      rootAllowed: true,
      fault: request.queryFault,
    });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    const limit = parseLimit(request.limit);
    if (limit === null) return { observation: error("bad_request") };
    const depth = request.depth === undefined || request.depth === "" ? 1 : Number(request.depth);
    if (!/^\d{0,3}$/.test(request.depth ?? "") || depth > 512) return { observation: error("bad_request") };
    const after = this.decodeCursor(request.cursor);
    if (after === undefined) return { observation: error("bad_request") };
    const rootKey = cap.levels.join("");
    const dirKey = path.text === "" ? rootKey : `${rootKey}${path.text}/`;
    if (utf8Length(dirKey) > MAX_KEY_BYTES) return { observation: error("invalid_path") };
    // A continued listing (cursor given) does not re-judge the folder: it is simply empty once gone.
    if (path.segments.length > 0 && after === null) {
      const self = dirKey.slice(0, -1);
      if (this.files.has(self)) return { observation: error("conflict") };
      if (!this.isDir(self)) return { observation: error("not_found") };
    }
    const atCapRoot = path.segments.length === 0;
    if (depth !== 1) return this.listTree(cap, dirKey, atCapRoot, { limit, after, depth });
    const byName = new Map<string, Json>();
    for (const [key, file] of this.files) {
      if (!key.startsWith(dirKey)) continue;
      const rest = key.slice(dirKey.length);
      const slash = rest.indexOf("/");
      const name = slash < 0 ? rest : rest.slice(0, slash);
      // A listing shows what this cap can name: at its root `~x` or `c:` would be an absolute path.
      if (atCapRoot && !namesItself(name)) continue;
      if (slash >= 0) byName.set(name, { name, type: "dir" });
      else if (!byName.has(name))
        byName.set(name, { name, type: "file", size: file.bytes.length, ...etagFor(cap, file), modified: "<time>" });
    }
    for (const dir of this.dirs) {
      if (!dir.startsWith(dirKey)) continue;
      const name = dir.slice(dirKey.length).split("/")[0]!;
      if (atCapRoot && !namesItself(name)) continue;
      byName.set(name, { name, type: "dir" });
    }
    const names = [...byName.keys()].filter((name) => after === null || compareUtf8(name, after) > 0).sort(compareUtf8);
    const page = names.slice(0, limit);
    const more = names.length > limit;
    const cursor = more ? MODEL_CURSOR + page[page.length - 1]! : null;
    return {
      observation: json(200, {
        entries: page.map((name) => byName.get(name)!),
        cursor: cursor === null ? null : "<cursor>",
      }),
      cursor,
    };
  }

  /** `folders`: a folder `from` is moved entry by entry (folder-move-model.ts); without, refused as one entry. */
  protected move(request: VaultRequest & { op: "move" }, folders = true): ModelAnswer {
    if (!this.live(request.cap)) return { observation: noSuchCap() };
    const body = parseJsonBody(request.body);
    if (!body.ok) return { observation: body.observation };
    const fields = body.value;
    if (typeof fields !== "object" || fields === null || Array.isArray(fields))
      return { observation: error("bad_request") };
    if (Object.keys(fields).some((k) => !["from", "to", "overwrite"].includes(k)))
      return { observation: error("bad_request") };
    const { from, to, overwrite = false } = fields as Record<string, unknown>;
    if (typeof from !== "string" || typeof to !== "string" || typeof overwrite !== "boolean")
      return { observation: error("bad_request") };

    const access = this.authorize(request.cap, ["write", "delete"], from, {});
    if (!access.ok) return { observation: access.observation };
    const { cap } = access.value;
    const toPath = parseFilePath(to);
    if (!toPath.ok) return { observation: toPath.observation };
    const src = fileKey(cap, access.value.path);
    if (!src.ok) return { observation: src.observation };
    const dst = fileKey(cap, toPath.value);
    if (!dst.ok) return { observation: dst.observation };

    const source = this.files.get(src.value);
    if (!source && folders && this.isDir(src.value))
      return this.moveFolder(request.cap, { from, to }, access.value.path.text, toPath.value.text, overwrite);
    if (!source) return { observation: this.isDir(src.value) ? error("conflict") : error("not_found") };
    if (this.someAncestorIsFile(dst.value)) return { observation: error("conflict") };
    if (this.isDir(dst.value)) return { observation: error("conflict") };
    const replacedFile = this.files.get(dst.value);
    const replaced = replacedFile !== undefined;
    if (replaced && !overwrite) return { observation: error("conflict") };
    if (replacedFile && src.value !== dst.value) this.supersede(dst.value, replacedFile);
    this.keepParentOf(src.value);
    this.files.delete(src.value);
    this.files.set(dst.value, source);
    // A move onto itself changes nothing, so it records nothing.
    if (src.value !== dst.value)
      this.journal.move(
        this.journalPath(src.value),
        this.journalPath(dst.value),
        contentOf(source),
        replaced,
        cap.role,
      );
    return { observation: json(200, { from, to }) };
  }

  private moveFolder(cap: CapPick, echo: { from: Json; to: Json }, from: string, to: string, overwrite: boolean) {
    const steps: FolderSteps = {
      stat: (path) => this.stat({ op: "stat", cap, path }),
      list: (path, cursor) => this.list({ op: "list", cap, path, limit: "250", ...(cursor ? { cursor } : {}) }),
      mkdir: (path) => this.mkdir({ op: "mkdir", cap, path }),
      rmdir: (path) => this.rmdir({ op: "rmdir", cap, path }),
      move: (src, dst, replace) =>
        this.move({ op: "move", cap, body: JSON.stringify({ from: src, to: dst, overwrite: replace }) }, false),
    };
    return moveFolderModel(steps, echo, from, to, overwrite);
  }
}
