/**
 * The bisimulation's requests: a generated command (bisim-commands.ts) made
 * into one VaultRequest, its paths, etags, version ids and roles resolved
 * against the sequence so far, the same for the model, R2 and disk.
 */
import { type CapPick, md5Hex, type QueryFault, type VaultModel, type VaultRequest } from "../model/vault-model.ts";
import type {
  CapArg,
  Command,
  JsonBody,
  PathArg,
  ResolvedPath,
  VersionIdArg,
  WriteCondition,
} from "./bisim-commands.ts";

function pickCap(arg: CapArg, model: VaultModel): CapPick {
  if (arg === "latest") return { role: model.capCount - 1 };
  return typeof arg === "number" ? { role: arg % model.capCount } : { bogus: arg };
}

const STALE_ETAG = md5Hex(new TextEncoder().encode("an old version"));

/** Paths that named a file or folder when last used in the sequence (the model decides), for `reuse`. */
export type History = string[];

/** After a request the model accepted, remembers the paths that now exist (only those a query can carry). */
export function remember(history: History, request: VaultRequest, status: number): void {
  if (status >= 300) return;
  const paths: unknown[] = [];
  if (request.op === "write") paths.push(request.path);
  if (request.op === "move" || request.op === "subdir") {
    // A successful request's body parsed; an empty one counts as `{}`.
    const body = JSON.parse(request.body || "{}") as Record<string, unknown>;
    paths.push(request.op === "move" ? body.to : body.path);
  }
  for (const path of paths) if (typeof path === "string" && path !== "" && path.isWellFormed()) history.push(path);
}

function resolvePath(arg: PathArg, history: History): ResolvedPath {
  if (!("reuse" in arg)) return arg;
  return { text: history.length === 0 ? "a" : history[history.length - 1 - (arg.reuse % history.length)]! };
}

function resolveBody(body: JsonBody, history: History): string {
  if (typeof body === "string") return body;
  const resolved = Object.fromEntries(
    Object.entries(body).map(([key, value]) => [
      key,
      value !== null && typeof value === "object" && "reuse" in value
        ? resolvePath(value as PathArg, history).text
        : value,
    ]),
  );
  return JSON.stringify(resolved);
}

/** Turns a generated command into a request, resolving paths, etags and roles against the sequence so far. */
export function toRequest(
  generated: Command,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  const cmd = "path" in generated ? { ...generated, path: resolvePath(generated.path, history) } : generated;
  const resolved = withFault(toPlainRequest(cmd, model, history), "path" in cmd ? cmd.path.fault : undefined);
  return resolved;
}

function withFault(resolved: { request: VaultRequest; raw?: string } | null, fault: QueryFault | undefined) {
  if (resolved && fault && "path" in resolved.request)
    (resolved.request as { queryFault?: QueryFault }).queryFault = fault;
  return resolved;
}

type ResolvedCommand =
  | Exclude<Command, { path: PathArg }>
  | (Extract<Command, { path: PathArg }> & { path: ResolvedPath });

function toPlainRequest(
  cmd: ResolvedCommand,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  switch (cmd.kind) {
    case "write": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? md5Hex(new Uint8Array([1]));
      const conditions: Record<WriteCondition, { ifMatch?: string; ifNoneMatch?: string }> = {
        none: {},
        ifMatch: { ifMatch: `"${current}"` },
        ifMatchBare: { ifMatch: current },
        ifMatchWeak: { ifMatch: `W/"${current}"` },
        ifMatchList: { ifMatch: `"${STALE_ETAG}", "${current}"` },
        ifMatchStale: { ifMatch: `"${STALE_ETAG}"` },
        ifMatchStar: { ifMatch: "*" },
        ifNoneMatchStar: { ifNoneMatch: "*" },
        ifNoneMatch: { ifNoneMatch: `"${current}"` },
        ifNoneMatchStale: { ifNoneMatch: `"${STALE_ETAG}"` },
      };
      const request: VaultRequest = {
        op: "write",
        cap,
        path: cmd.path.text,
        content: cmd.content,
        ...conditions[cmd.condition],
      };
      if (cmd.contentType !== undefined) request.contentType = cmd.contentType;
      return { request, ...raw(cmd.path) };
    }
    case "read": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? STALE_ETAG;
      const ifNoneMatch = {
        none: undefined,
        current: `"${current}"`,
        weak: `W/"${current}"`,
        stale: `"${STALE_ETAG}"`,
        star: "*",
        list: `"${STALE_ETAG}", W/"${current}"`,
      }[cmd.condition];
      const request: VaultRequest = { op: "read", cap, path: cmd.path.text };
      if (cmd.range !== undefined) request.range = cmd.range;
      if (ifNoneMatch !== undefined) request.ifNoneMatch = ifNoneMatch;
      return { request, ...raw(cmd.path) };
    }
    case "stat":
    case "delete":
    case "mkdir":
    case "rmdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), path: cmd.path.text }, ...raw(cmd.path) };
    case "list": {
      const request: VaultRequest = { op: "list", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = cmd.cursor;
      if (cmd.depth !== undefined) request.depth = cmd.depth;
      return { request, ...raw(cmd.path) };
    }
    case "move":
    case "subdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), body: resolveBody(cmd.body, history) } };
    case "revoke":
      // Any non-root cap, live or already dead.
      return model.capCount < 2
        ? null
        : { request: { op: "revoke", cap: { role: 1 + (cmd.target % (model.capCount - 1)) } } };
    case "revokeChild": {
      const child: CapPick = cmd.child === "bogus" ? { bogus: "unknown" } : { role: cmd.child % model.capCount };
      return { request: { op: "revokeChild", cap: pickCap(cmd.cap, model), child } };
    }
    case "children":
    case "info":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model) } };
    case "resume":
      return null; // run by runSequence, from the saved listing
    case "versions": {
      const request: VaultRequest = { op: "versions", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = versionIdFor(cmd.cursor, model, request.cap);
      return { request, ...raw(cmd.path) };
    }
    case "readVersion":
    case "restore":
    case "redact": {
      const cap = pickCap(cmd.cap, model);
      return { request: { op: cmd.kind, cap, id: versionIdFor(cmd.id, model, cap) } };
    }
  }
}

function versionIdFor(arg: VersionIdArg, model: VaultModel, cap: CapPick): string {
  const newest = model.newestVersionId;
  if ("raw" in arg) return arg.raw;
  if ("unknown" in arg) return String(newest + 1 + arg.unknown);
  if ("mine" in arg) {
    // None it can name: the newest of the root, which it may or may not reach.
    const mine = "role" in cap ? model.versionIdsOf(cap.role) : [];
    return String(mine.length > 0 ? mine[arg.mine % mine.length] : Math.max(1, newest));
  }
  if (newest === 0) return "1";
  return String("recent" in arg ? Math.max(1, newest - arg.recent) : 1 + (arg.any % newest));
}

function raw(path: ResolvedPath): { raw?: string } {
  return path.raw === undefined ? {} : { raw: path.raw };
}
