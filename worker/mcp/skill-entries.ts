import type { CapObject } from "../../durable-objects/cap-object.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import type { ListEntry, ListPage } from "../../shared/wire-types.ts";
import { SKILL_FILE, skillPathUri } from "./cap-resources.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import {
  chargeCalls,
  chargeListed,
  chargeListing,
  REQUEST_MAX_LISTED,
  REQUEST_MAX_LISTINGS,
  REQUEST_MAX_READ_CHARS,
  REQUEST_MAX_STORAGE_CALLS,
  type RequestBudget,
} from "./request-budget.ts";

/**
 * The MCP Skills extension (SEP-2640) over a cap: every folder below the
 * cap's root whose SKILL.md opens with valid frontmatter (a `name` equal to
 * the folder's own name, a `description`) is a skill at
 * `skill://<folder>/SKILL.md`, its resources every file below the folder
 * (nested skills' files excepted), each with the SHA-256 the vault stored
 * when it was written. Nothing is cached: each call asks the cap, which
 * decides rights and liveness as for every route.
 */

/** The extension's limits per skill: files, SKILL.md included, and their total bytes. */
export const SKILL_MAX_FILES = 512;
export const SKILL_MAX_BYTES = 16 * 1024 * 1024;

/** Bytes of a SKILL.md read to find its frontmatter, which must end within them. */
export const SKILL_HEAD_BYTES = 64 * 1024;

/** Entries of the cap's recursive listing one skills/list page scans for SKILL.md files. */
export const SKILLS_SCAN = 1000;

/** Skills one skills/list page holds at most (each costs a read and a listing). */
export const SKILLS_PAGE = 16;

/** One page of a directory read. */
export const DIRECTORY_PAGE = 100;

export const DIRECTORY_MIME_TYPE = "inode/directory";

export interface SkillResource {
  uri: string;
  digest: string;
  size: number;
}

export interface SkillEntry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: SkillResource[];
}

/** What a skill call works on: the request's cap and budget. */
export interface SkillScope {
  cap: DurableObjectStub<CapObject>;
  budget: RequestBudget;
}

/** `uri` as WHATWG URL serialises it, or `undefined`. */
export function canonicalUri(uri: string): string | undefined {
  try {
    return new URL(uri).href;
  } catch {
    return undefined;
  }
}

/**
 * The skill whose folder is `folder` (a cap path, never the root), `null`
 * when that folder is no skill: no SKILL.md, no valid frontmatter in its
 * first {@link SKILL_HEAD_BYTES}, a file without a stored digest, or more
 * than the extension's limits. Costs one ranged read and one listing.
 */
export async function skillAt(scope: SkillScope, folder: string): Promise<Result<SkillEntry | null>> {
  if (folder === "" || folder.startsWith("/")) return ok(null);
  const head = await readHead(scope, `${folder}/${SKILL_FILE}`);
  if (!head.ok) return head;
  if (head.value === null) return ok(null);
  const frontmatter = await parseFrontmatter(folder, head.value);
  if (frontmatter === null) return ok(null);
  const files = await skillFiles(scope, folder);
  if (!files.ok) return files;
  if (files.value === null) return ok(null);
  const uri = skillPathUri(`${folder}/${SKILL_FILE}`);
  if (frontmatter.uri !== uri) return ok(null);
  return ok({ uri, frontmatter: frontmatter.frontmatter, resources: files.value });
}

/**
 * Up to {@link SKILL_HEAD_BYTES} of the file at `path` (a 206 read), or
 * `null` when there is no such file or it is empty.
 */
async function readHead(scope: SkillScope, path: string): Promise<Result<Uint8Array | null>> {
  const { budget, cap } = scope;
  if (budget.read + SKILL_HEAD_BYTES > REQUEST_MAX_READ_CHARS)
    return failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }));
  const spent = chargeCalls(budget);
  if (!spent.ok) return spent;
  const read = (await cap.readFile(path, { range: `bytes=0-${SKILL_HEAD_BYTES - 1}`, ifNoneMatch: null })) as Result<
    { status: "body"; body: ReadableStream<Uint8Array> } | { status: "not_modified" | "unsatisfiable" }
  >;
  if (!read.ok) return read.error.code === "not_found" || read.error.code === "conflict" ? ok(null) : read;
  if (read.value.status !== "body") return ok(null);
  const bytes = new Uint8Array(SKILL_HEAD_BYTES);
  let at = 0;
  const reader = read.value.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // The range bounds what the storage sends; this bounds what is kept if it sent more.
    const take = Math.min(value.byteLength, SKILL_HEAD_BYTES - at);
    bytes.set(value.subarray(0, take), at);
    at += take;
    if (at === SKILL_HEAD_BYTES) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  budget.read += at;
  return ok(at === 0 ? null : bytes.subarray(0, at));
}

const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });

/**
 * The frontmatter of a SKILL.md whose first bytes are `head`, read and
 * checked by the official SDK (its YAML subset; the name rules and the
 * folder-name match of the Agent Skills spec), with the SKILL.md URI the SDK
 * gives it; `null` when it is not a valid skill's.
 */
async function parseFrontmatter(
  folder: string,
  head: Uint8Array,
): Promise<{ uri: string; frontmatter: Record<string, unknown> } | null> {
  const text = lenientUtf8.decode(head).replaceAll("\r\n", "\n");
  if (!text.startsWith("---\n")) return null;
  const close = /^---[\t ]*$/m.exec(text.slice(4));
  if (close === null) return null;
  const block = text.slice(0, 4 + close.index + close[0].length);
  // A replacement character is bytes that were not UTF-8, or a character the head cut in two.
  if (block.includes("\uFFFD")) return null;
  const { skillEntry } = await import("@modelcontextprotocol/server/ext/skills");
  try {
    const entry = await skillEntry(folder, { [SKILL_FILE]: `${block}\n` });
    return { uri: entry.uri, frontmatter: entry.frontmatter as Record<string, unknown> };
  } catch {
    return null;
  }
}

/**
 * Every file of the skill in `folder` as `{uri, digest, size}`, sorted by
 * URI; `null` when the folder holds more than a listing page of files (nested
 * skills' included), more than the extension's limits, or a file stored
 * before the vault kept SHA-256 digests.
 */
async function skillFiles(scope: SkillScope, folder: string): Promise<Result<SkillResource[] | null>> {
  const page = await listPage(scope, folder, null, SKILLS_SCAN, "0");
  if (!page.ok) return page.error.code === "not_found" ? ok(null) : page;
  if (page.value.cursor !== null) return ok(null);
  const entries = page.value.entries.filter((e) => e.type === "file");
  // A folder below that holds a SKILL.md is a skill of its own: its files are not this one's.
  const nested = new Set(
    entries
      .filter((e) => e.name !== SKILL_FILE && e.name.endsWith(`/${SKILL_FILE}`))
      .map((e) => e.name.slice(0, -SKILL_FILE.length - 1)),
  );
  // Each of a file's folders looked up once: linear in the names, however many skills nest.
  const insideNested = (name: string) => {
    for (let at = name.indexOf("/"); at !== -1; at = name.indexOf("/", at + 1)) {
      if (nested.has(name.slice(0, at))) return true;
    }
    return false;
  };
  const own = entries.filter((e) => !insideNested(e.name));
  if (own.length > SKILL_MAX_FILES) return ok(null);
  let bytes = 0;
  const resources: SkillResource[] = [];
  for (const file of own) {
    if (typeof file.sha256 !== "string" || typeof file.size !== "number") return ok(null);
    bytes += file.size;
    resources.push({ uri: skillPathUri(`${folder}/${file.name}`), digest: `sha256:${file.sha256}`, size: file.size });
  }
  if (bytes > SKILL_MAX_BYTES) return ok(null);
  return ok(resources.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)));
}

/** One page of the cap's listing of `path`, charged to the request's budget. */
async function listPage(
  scope: SkillScope,
  path: string,
  cursor: string | null,
  limit: number,
  depth: "0" | null,
): Promise<Result<ListPage>> {
  const left = chargeListing(scope.budget, limit);
  if (!left.ok) return left;
  if (left.value < limit) return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
  const page = (await scope.cap.listDir(path, cursor, String(limit), depth)) as Result<ListPage>;
  if (page.ok) chargeListed(scope.budget, page.value.entries.length);
  return page;
}

/** Whether one more skill (a read and a listing) and the page's closing listing still fit the budget. */
function mayBuildSkill(budget: RequestBudget): boolean {
  return (
    budget.listings + 2 <= REQUEST_MAX_LISTINGS &&
    budget.listed + 2 * (SKILLS_SCAN + 1) <= REQUEST_MAX_LISTED &&
    budget.calls + 3 <= REQUEST_MAX_STORAGE_CALLS &&
    budget.read + SKILL_HEAD_BYTES <= REQUEST_MAX_READ_CHARS
  );
}

const isSkillFile = (entry: ListEntry) =>
  entry.type === "file" && entry.name.endsWith(`/${SKILL_FILE}`) && !entry.name.startsWith("/");

/**
 * One page of skills/list: the skills whose SKILL.md lies in the next
 * {@link SKILLS_SCAN} files of the cap's recursive listing from `cursor`,
 * at most {@link SKILLS_PAGE} of them and as many as the request's budget
 * allows. A page cut short ends just before the SKILL.md it did not reach,
 * so no skill is split or lost between pages.
 */
export async function listSkills(
  scope: SkillScope,
  cursor: string | null,
): Promise<Result<{ skills: SkillEntry[]; nextCursor: string | null }>> {
  const scan = await listPage(scope, "", cursor, SKILLS_SCAN, "0");
  if (!scan.ok) return scan;
  const skills: SkillEntry[] = [];
  let stopAt: number | null = null;
  const entries = scan.value.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (!isSkillFile(entry)) continue;
    if (skills.length === SKILLS_PAGE || !mayBuildSkill(scope.budget)) {
      stopAt = i;
      break;
    }
    const skill = await skillAt(scope, entry.name.slice(0, -SKILL_FILE.length - 1));
    if (!skill.ok) return skill;
    if (skill.value) skills.push(skill.value);
  }
  if (stopAt === null) return ok({ skills, nextCursor: scan.value.cursor });
  if (stopAt === 0) return failed(mcpRefusal("listingsSpent", { max: REQUEST_MAX_LISTINGS }));
  // The cursor just before the SKILL.md not reached: the same listing again, cut there.
  const cut = await listPage(scope, "", cursor, stopAt, "0");
  if (!cut.ok) return cut;
  return ok({ skills, nextCursor: cut.value.cursor });
}

export interface DirectoryResource {
  uri: string;
  name: string;
  mimeType?: string;
  size?: number;
}

/**
 * One page of `resources/directory/read` on the folder `path` of the cap:
 * its direct children, folders as `inode/directory`, each named with
 * `uriOf`. `null` when `path` is no folder (a file, or nothing).
 */
export async function readDirectory(
  scope: SkillScope,
  path: string,
  cursor: string | null,
  uriOf: (path: string) => string,
  mimeTypeOf: (path: string) => string | undefined,
): Promise<Result<{ resources: DirectoryResource[]; nextCursor: string | null } | null>> {
  const page = await listPage(scope, path, cursor, DIRECTORY_PAGE, null);
  if (!page.ok) {
    const notFolder = page.error.code === "not_found" || page.error.code === "conflict";
    return notFolder ? ok(null) : page;
  }
  const resources = page.value.entries.map((entry): DirectoryResource => {
    const child = path === "" ? entry.name : `${path}/${entry.name}`;
    if (entry.type === "dir") return { uri: uriOf(child), name: entry.name, mimeType: DIRECTORY_MIME_TYPE };
    const mimeType = mimeTypeOf(child);
    return {
      uri: uriOf(child),
      name: entry.name,
      ...(mimeType ? { mimeType } : {}),
      ...(entry.size === undefined ? {} : { size: entry.size }),
    };
  });
  return ok({ resources, nextCursor: page.value.cursor });
}
