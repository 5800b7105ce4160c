import { createHash, randomBytes } from "node:crypto";
import type { Right } from "../shared/rights.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { FindingKind } from "./findings.ts";
import { callFresh, call as callOnce, header, json, type Observed, text } from "./http-call.ts";
import { checkResponse } from "./response-checks.ts";
import { call, type Fixture, put, subdir } from "./vault-fixture.ts";

/**
 * The caps the surface fuzz (RPC, versions, watch, console) sends its cases
 * to, by role, and what each role must never see. A hidden file sits in the
 * root under a name no generator spells, so only the vault can show it: its
 * name needs `list` (or `read`), its bytes and hashes need `read`, and a cap
 * below the root (the `dir` child) sees none of it. Version ids are guessable
 * (a counter), so restore, redact and the feeds reach it without its name.
 */
export type Role = "root" | "child" | "readOnly" | "writeOnly" | "listOnly" | "deleteOnly" | "revoked" | "unknown";
export const ROLES: readonly Role[] = [
  "root",
  "child",
  "readOnly",
  "writeOnly",
  "listOnly",
  "deleteOnly",
  "revoked",
  "unknown",
];

/** Version ids the run learns at setup, picked by name so the same seed means the same case on both backends. */
export type KnownVersion = "hidden" | "a" | "b";

export interface SurfaceTarget {
  backend: Backend;
  base: string;
  tokens: Record<Role, string>;
  /** The right each role holds, for the checks (none for dead tokens). */
  rights: Record<Role, readonly Right[]>;
  versions: Record<KnownVersion, string>;
  hidden: { name: string; content: string; md5: string; sha256: string };
  /** The fixture's secrets: never in any answer. */
  secrets: readonly string[];
}

const ROLE_GRANTS: Record<"child" | "readOnly" | "writeOnly" | "listOnly" | "deleteOnly", Record<string, unknown>> = {
  child: { path: "dir" },
  readOnly: { path: "", rights: ["read", "list"] },
  writeOnly: { path: "", rights: ["write"] },
  listOnly: { path: "", rights: ["list"] },
  deleteOnly: { path: "", rights: ["delete"] },
};

export async function surfaceTarget(fixture: Fixture, backend: Backend): Promise<SurfaceTarget> {
  const root = fixture.roots[backend];
  const tag = randomBytes(6).toString("hex");
  const hiddenName = `hidden${tag}.txt`;
  const content = `HIDDENBYTES${randomBytes(8).toString("hex")}\n`;
  await put(root.url, hiddenName, content);
  const tokens = { root: root.token, unknown: "b".repeat(32) } as Record<Role, string>;
  for (const [role, grant] of Object.entries(ROLE_GRANTS)) tokens[role as Role] = (await subdir(root.url, grant)).token;
  const doomed = await subdir(root.url, { path: "dir", label: "to revoke" });
  await call(doomed.url, { method: "DELETE" });
  tokens.revoked = doomed.token;
  const all: Right[] = ["read", "write", "delete", "list", "subdir"];
  return {
    backend,
    base: fixture.vault.url,
    tokens,
    rights: {
      root: all,
      child: all,
      readOnly: ["read", "list"],
      writeOnly: ["write"],
      listOnly: ["list"],
      deleteOnly: ["delete"],
      revoked: [],
      unknown: [],
    },
    versions: {
      hidden: await newestVersion(root.url, hiddenName),
      a: await newestVersion(root.url, "a.txt"),
      b: await newestVersion(root.url, "dir/b.txt"),
    },
    hidden: {
      name: hiddenName,
      content,
      md5: createHash("md5").update(content).digest("hex"),
      sha256: createHash("sha256").update(content).digest("hex"),
    },
    secrets: fixture.secrets,
  };
}

async function newestVersion(capUrl: string, file: string): Promise<string> {
  const page = await call(`${capUrl}/versions?path=${encodeURIComponent(file)}&limit=1`);
  const id = (json(page) as { versions?: { id: string }[] } | undefined)?.versions?.[0]?.id;
  if (page.status !== 200 || id === undefined) throw new Error(`versions of ${file}: ${page.status} ${text(page)}`);
  return id;
}

export const capUrl = (target: SurfaceTarget, role: Role) => `${target.base}/object/${target.tokens[role]}`;

/** What `role` must never see beyond the fixture's secrets: the hidden file's bytes, hashes and name, by right. */
function forbidden(target: SurfaceTarget, role: Role): string[] {
  const rights = target.rights[role];
  const { name, content, md5, sha256 } = target.hidden;
  // The child's root is `dir`: the hidden file is outside it, all of it.
  if (role === "child") return [name, content, md5, sha256];
  const out: string[] = [];
  if (!rights.includes("read")) out.push(content.trim(), md5, sha256);
  if (!rights.includes("read") && !rights.includes("list")) out.push(name);
  return out;
}

/** A hash in an answer: a JSON `sha256`/`etag` field or an `ETag` header. */
const HASH_FIELD = /"(?:sha256|etag)"\s*:\s*"(?:sha256:)?([0-9a-f]{32}|[0-9a-f]{64})"/g;

function md5sha(bytes: string | Uint8Array): string[] {
  return [createHash("md5").update(bytes).digest("hex"), createHash("sha256").update(bytes).digest("hex")];
}

export interface Judged {
  kind: FindingKind;
  detail: string;
}

/**
 * The surface fuzz's properties for one answer, on top of checkResponse's
 * (no 5xx, no secret, contract refusals): nothing `role` may not see; and a
 * cap without `read` sees no content hash at all except of the bytes this
 * very case sent it (a write answers the hash of what it wrote).
 */
export function judgeAnswer(
  target: SurfaceTarget,
  role: Role,
  observed: Observed,
  sent: readonly (string | Uint8Array)[],
  head = false,
): Judged[] {
  const out: Judged[] = checkResponse(observed, target.secrets, undefined, head);
  out.push(...judgeText(target, role, `${text(observed)}\n${header(observed, "etag") ?? ""}`, sent));
  return out;
}

/** The role's properties on text that came back some other way (socket messages, a feed's first bytes). */
export function judgeText(target: SurfaceTarget, role: Role, body: string, sent: readonly (string | Uint8Array)[]) {
  const out: Judged[] = [];
  for (const secret of target.secrets)
    if (body.includes(secret)) out.push({ kind: "leak", detail: `holds ${JSON.stringify(secret.slice(0, 24))}…` });
  for (const secret of forbidden(target, role))
    if (body.includes(secret))
      out.push({
        kind: "leak",
        detail: `${role} (${target.rights[role].join("+") || "dead"}) saw ${secret === target.hidden.name ? "a name" : secret.length >= 32 ? "a hash" : "bytes"} it has no right to: ${body.slice(0, 200)}`,
      });
  if (!target.rights[role].includes("read")) {
    const allowed = new Set(sent.flatMap(md5sha));
    const etagHeader = /\n"?([0-9a-f]{32}|[0-9a-f]{64})"?$/.exec(body)?.[1];
    const seen = [...body.matchAll(HASH_FIELD)].map((m) => m[1]!);
    if (etagHeader) seen.push(etagHeader);
    const foreign = seen.find((h) => !allowed.has(h));
    if (foreign && !out.some((j) => j.kind === "leak"))
      out.push({
        kind: "leak",
        detail: `${role} (${target.rights[role].join("+") || "dead"}) without read saw the hash ${foreign.slice(0, 12)}… of bytes it did not send: ${body.slice(0, 200)}`,
      });
  }
  return out;
}

/** The replay hint's tail and a finding adder shared by the surface runs. */
export type Report = (kind: FindingKind, detail: string) => void;

/** An answer in a word or two for the tally: its status, and a refusal's code. */
export function outcomeOf(observed: Observed): string {
  if (observed.status === 0) return "no answer";
  const code = (json(observed) as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === "string" ? `${observed.status} ${code}` : String(observed.status);
}

/**
 * One fuzz request. A pooled connection closed under it (see fuzz-run.ts:
 * the server had just closed it, or refused a body it would not read) is
 * counted as a drop and the request sent again on a connection of its own,
 * so the case is still judged.
 */
export async function sendHttp(
  report: Report,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
  timeoutMs: number,
): Promise<Observed> {
  const first = await callOnce(url, init, timeoutMs);
  if (first.status !== 0 || !/closed|ECONNRESET/.test(first.error ?? "")) return first;
  report("drop", `connection closed without an answer (${first.error}); sent again`);
  return callFresh(url, init, timeoutMs);
}
