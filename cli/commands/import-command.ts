import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ARCHIVE_FORMAT, STATE_FORMAT } from "../../shared/archive-format.ts";
import { tokenKeyFingerprint } from "../../shared/token-key.ts";
import { ArchiveError } from "../archive/archive-error.ts";
import { ARCHIVE_MAGIC, openArchive, type RecordHead, type RecordReader } from "../archive/archive-file.ts";
import { givenPassphrase, PASSPHRASE_OPTIONS, promptPassphrase } from "../archive/passphrase.ts";
import { Progress } from "../archive/progress.ts";
import { VaultAdmin } from "../archive/vault-admin.ts";
import { ADMIN_TOKEN_FILE_OPTION } from "../cap-source.ts";
import type { CommandInput, CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { UsageError } from "../usage-error.ts";

type Backend = "r2" | "disk";
const RECORD_TYPES = new Set(["roots", "caps", "journal", "blob", "file", "oauth"]);

interface Checked {
  archiveId: string;
  tokenKey: string;
  keyFingerprint: string;
  stateFormat: number;
  roots: { id: string; backend: Backend; prefix: string }[];
  records: number;
  /** The end record's hash: the second pass must read the same archive. */
  sha256: string | null;
}

/**
 * `capvault import FILE`: a whole vault from an archive (docs/export-import.md).
 * The archive is read through once and checked whole (decrypted, every
 * header parsed, the end record's hash) before anything is sent; then caps
 * are staged, files and history written, and one commit makes every cap
 * live. A re-run of the same archive resumes.
 */
export const importCommand: CommandSpec = {
  name: "import",
  summary: "import a whole vault from an archive file (admin)",
  usage:
    "import FILE [--backend r2|disk] [--merge] [--passphrase-file PATH | --passphrase-env NAME] [--admin-token-file PATH]\n" +
    "import FILE --write-key STATE_FOLDER | --print-key\n" +
    "import --abort",
  description:
    "Imports every cap, file, version, audit line and OAuth grant of the archive into the vault at\n" +
    "CAPVAULT_URL; every cap URL minted before the export works unchanged. The vault must sign with the\n" +
    "archive's token key: --write-key writes it into a stopped local vault's state folder, --print-key\n" +
    "prints it for `npx wrangler secret put CAPVAULT_TOKEN_KEY` (stdout must be a pipe). A vault with\n" +
    "roots is refused unless --merge (then no root may overlap one of the vault's). --backend moves every\n" +
    "root to that backend. --abort gives up an import cut before its commit (another archive may then be\n" +
    "imported). See docs/export-import.md.",
  options: {
    backend: { type: "string", value: "r2|disk", help: "put every root of the archive on this backend" },
    merge: { type: "boolean", help: "import into a vault that has roots (none may overlap the archive's)" },
    "write-key": { type: "string", value: "STATE_FOLDER", help: "write the archive's token key into a stopped vault" },
    "print-key": { type: "boolean", help: "print the archive's token key to a pipe (for wrangler secret put)" },
    abort: { type: "boolean", help: "give up the open import that has not begun its commit" },
    ...PASSPHRASE_OPTIONS,
    "admin-token-file": ADMIN_TOKEN_FILE_OPTION,
  },
  async run(input) {
    if (input.values.abort === true) return abortImport(input);
    const [file] = positionalArgs(input.positionals, { required: ["FILE"] }, "import") as [string];
    const target = stringOption(input.values.backend);
    if (target !== undefined && target !== "r2" && target !== "disk")
      throw new UsageError("--backend is r2 or disk", "import");
    let phrase: string | null | undefined = givenPassphrase(input, "import");
    const passphrase = async () => {
      phrase ??= await promptPassphrase(input, "passphrase of the archive: ");
      return phrase;
    };
    const checked = await verifyArchive(file, passphrase);

    const writeKey = stringOption(input.values["write-key"]);
    if (writeKey !== undefined) return writeKeyInto(input, writeKey, checked);
    if (input.values["print-key"] === true) {
      if ((input.io.stdout as { isTTY?: boolean }).isTTY)
        throw new UsageError("--print-key writes the key to a pipe only, never a terminal", "import");
      input.io.stdout.write(`${checked.tokenKey}\n`);
      return;
    }

    const admin = new VaultAdmin(input, "import");
    const state = await admin.state();
    if (state.keyFingerprint !== checked.keyFingerprint) throw keyMismatch(file, checked, state.keyFingerprint);
    const merge = input.values.merge === true;
    const resuming = state.open === checked.archiveId;
    if (!resuming && state.hasRoots && !merge)
      throw new ArchiveError(
        "vault_not_empty",
        "this vault already has root caps: import into an empty vault, or pass --merge; nothing was imported",
      );
    const remap = (backend: Backend): Backend => (target as Backend | undefined) ?? backend;
    if (target !== undefined) checkRemap(checked);
    if (merge && !resuming) await checkMerge(admin, checked, remap);
    const begun = await admin.post<{ committing: boolean }>("/import/begin", {
      archiveId: checked.archiveId,
      keyFingerprint: checked.keyFingerprint,
      merge,
    });
    const counts = { caps: 0, files: 0, blobs: 0, bytes: 0 };
    if (!begun.committing) await send(input, admin, file, passphrase, checked, remap, counts);
    for (;;) {
      const step = await admin.post<{ done: boolean }>("/import/commit", { archiveId: checked.archiveId });
      if (step.done) break;
    }
    const summary = {
      file,
      archiveId: checked.archiveId,
      roots: checked.roots.length,
      resumedCommit: begun.committing,
      ...counts,
    };
    if (input.json) await printJson(input.io, summary);
    else
      input.io.stderr.write(
        `imported ${checked.roots.length} roots, ${counts.caps} caps, ${counts.files} files, ${counts.blobs} older versions\n`,
      );
  },
};

async function abortImport(input: CommandInput): Promise<void> {
  if (input.positionals.length > 0) throw new UsageError("--abort takes no FILE", "import");
  const admin = new VaultAdmin(input, "import");
  const { open, committing } = await admin.state();
  if (open === null) {
    input.io.stderr.write("no import is open in this vault\n");
    return;
  }
  if (committing)
    throw new ArchiveError(
      "vault_not_empty",
      "the open import has begun its commit: run the import again to finish it",
    );
  for (;;) {
    const step = await admin.post<{ done: boolean }>("/import/abort", { archiveId: open });
    if (step.done) break;
  }
  input.io.stderr.write(`gave up the import of archive ${open}; none of its caps became live\n`);
}

/** Reads the whole archive once, sending nothing: every way it can be damaged is found here. */
async function verifyArchive(file: string, passphrase: () => Promise<string | null>): Promise<Checked> {
  const { records } = await openArchive(file, passphrase).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof ArchiveError) throw error;
    throw new ArchiveError("local_error", `cannot read the archive: ${error.code ?? "error"}`);
  });
  const header = await records.next();
  if (header?.t !== "header" || header.magic !== ARCHIVE_MAGIC)
    throw new ArchiveError("not_an_archive", "this file is not a capvault archive");
  const archiveFormat = Number(header.archiveFormat);
  const stateFormat = Number(header.stateFormat);
  if (
    !Number.isSafeInteger(archiveFormat) ||
    !Number.isSafeInteger(stateFormat) ||
    typeof header.archiveId !== "string"
  )
    throw new ArchiveError("archive_corrupt", "the archive's header is damaged");
  if (archiveFormat > ARCHIVE_FORMAT || stateFormat > STATE_FORMAT)
    throw new ArchiveError(
      "archive_too_new",
      `the archive is of state format ${stateFormat} (archive format ${archiveFormat}); this capvault reads up to ` +
        `state format ${STATE_FORMAT} (archive format ${ARCHIVE_FORMAT}): upgrade capvault first`,
    );
  const key = await records.next();
  if (key?.t !== "key" || typeof key.tokenKey !== "string")
    throw new ArchiveError("archive_corrupt", "the archive's key record is missing or damaged");
  const keyFingerprint = await tokenKeyFingerprint(key.tokenKey);
  if (keyFingerprint === null || keyFingerprint !== header.keyFingerprint)
    throw new ArchiveError("archive_corrupt", "the archive's token key does not match its header");
  const checked: Checked = {
    archiveId: header.archiveId,
    tokenKey: key.tokenKey,
    keyFingerprint,
    stateFormat,
    roots: [],
    records: 2,
    sha256: null,
  };
  for (let head = await records.next(); head !== null; head = await records.next()) {
    checked.records++;
    if (!RECORD_TYPES.has(head.t))
      throw new ArchiveError("archive_corrupt", `record ${checked.records} has an unknown type`);
    if (!isSendable(head)) throw new ArchiveError("archive_corrupt", `record ${checked.records} is damaged`);
    if (head.t === "roots")
      for (const root of head.roots as Checked["roots"])
        checked.roots.push({ id: root.id, backend: root.backend, prefix: root.prefix });
  }
  checked.sha256 = records.digest;
  return checked;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isBackend = (v: unknown): v is Backend => v === "r2" || v === "disk";
/** A root prefix as the registry writes one: `""` or ending in `/` (what the nesting checks rely on). */
const isPrefix = (v: unknown): v is string => typeof v === "string" && (v === "" || v.endsWith("/"));

/**
 * The shape `sendRecord` relies on, judged in the first pass: a record the
 * hash covers may still have been crafted, and one found damaged only while
 * sending would leave an import open with part of it staged. The vault
 * judges every field again; this is only what the CLI itself reads.
 */
function isSendable(head: RecordHead): boolean {
  switch (head.t) {
    case "roots":
      return (
        Array.isArray(head.roots) &&
        head.roots.every((r) => isObject(r) && typeof r.id === "string" && isBackend(r.backend) && isPrefix(r.prefix))
      );
    case "caps":
      return Array.isArray(head.caps) && head.caps.every((c) => isObject(c) && isObject(c.record));
    case "journal":
      return (
        isBackend(head.backend) && isPrefix(head.prefix) && typeof head.table === "string" && Array.isArray(head.rows)
      );
    case "blob":
    case "file":
      return (
        isBackend(head.backend) &&
        isPrefix(head.prefix) &&
        typeof head.path === "string" &&
        Number.isSafeInteger(head.len) &&
        (head.blob === undefined || head.blob === null || typeof head.blob === "string")
      );
    case "oauth":
      return Array.isArray(head.entries);
    default:
      return false;
  }
}

/** The merge rule: no root of the archive may share a backend and an overlapping prefix with one of the vault's. */
async function checkMerge(admin: VaultAdmin, checked: Checked, remap: (b: Backend) => Backend): Promise<void> {
  let cursor: string | null = null;
  do {
    const page: { roots: { id: string; backend: Backend; prefix: string }[]; cursor: string | null } = await admin.get(
      "/roots",
      { cursor },
    );
    for (const ours of page.roots)
      for (const theirs of checked.roots) {
        const backend = remap(theirs.backend);
        const overlap = ours.prefix.startsWith(theirs.prefix) || theirs.prefix.startsWith(ours.prefix);
        if (ours.id === theirs.id || (ours.backend === backend && overlap))
          throw new ArchiveError(
            "merge_conflict",
            `--merge: root ${theirs.id} of the archive overlaps root ${ours.id} of this vault on ${backend}; nothing was imported`,
          );
      }
    cursor = page.cursor;
  } while (cursor);
}

/**
 * Roots of two backends whose prefixes nest would each see the other's files once on one backend: refused.
 * In sorted order every prefix follows the prefixes it nests in, so one pass with a stack of the current
 * prefix's ancestors finds any nesting pair of two backends (pairwise, a crafted archive of 60,000 roots
 * took 24 s).
 */
function checkRemap(checked: Checked): void {
  const sorted = [...checked.roots].sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  const stack: { root: Checked["roots"][number]; other: Map<Backend, Checked["roots"][number]> }[] = [];
  for (const root of sorted) {
    while (stack.length > 0 && !root.prefix.startsWith(stack[stack.length - 1]!.root.prefix)) stack.pop();
    const above = stack[stack.length - 1]?.other ?? new Map<Backend, Checked["roots"][number]>();
    for (const [backend, b] of above)
      if (backend !== root.backend)
        throw new ArchiveError(
          "merge_conflict",
          `--backend: roots ${root.id} (${root.backend}) and ${b.id} (${b.backend}) have nesting prefixes and would share files on one backend; nothing was imported`,
        );
    const other = new Map(above);
    if (!other.has(root.backend)) other.set(root.backend, root);
    stack.push({ root, other });
  }
}

/** The second pass: every record to the vault, in the archive's order, each a bounded call. */
async function send(
  input: CommandInput,
  admin: VaultAdmin,
  file: string,
  passphrase: () => Promise<string | null>,
  checked: Checked,
  remap: (b: Backend) => Backend,
  counts: { caps: number; files: number; blobs: number; bytes: number },
): Promise<void> {
  const { records } = await openArchive(file, passphrase);
  const progress = new Progress(input.io, "import");
  try {
    await records.next();
    await records.next();
    for (let head = await records.next(); head !== null; head = await records.next())
      await sendRecord(admin, records, head, checked.archiveId, remap, counts, progress);
  } finally {
    progress.done();
  }
  // The file was read twice: what was sent must be what was checked, or nothing is committed.
  if (records.digest !== checked.sha256)
    throw new ArchiveError(
      "archive_corrupt",
      "the archive changed between its check and its import; nothing was made live (`capvault import --abort` gives it up)",
    );
}

async function sendRecord(
  admin: VaultAdmin,
  records: RecordReader,
  head: RecordHead,
  archiveId: string,
  remap: (b: Backend) => Backend,
  counts: { caps: number; files: number; blobs: number; bytes: number },
  progress: Progress,
): Promise<void> {
  const backend = remap(head.backend as Backend);
  switch (head.t) {
    case "roots": {
      const roots = (head.roots as { backend: Backend }[]).map((r) => ({ ...r, backend: remap(r.backend) }));
      await admin.post("/import/roots", { archiveId, roots });
      return;
    }
    case "caps": {
      const caps = (head.caps as (ArchivedCap & { record: { backend: Backend } })[]).map((c) => ({
        ...c,
        record: { ...c.record, backend: remap(c.record.backend) },
      }));
      for (const call of stagingCalls(caps)) {
        await admin.post("/import/caps", { archiveId, caps: call.caps });
        for (const page of call.pages) await admin.post("/import/cap-page", { archiveId, ...page });
      }
      counts.caps += caps.length;
      break;
    }
    case "journal":
      await admin.post("/import/journal", {
        archiveId,
        backend,
        prefix: head.prefix,
        table: head.table,
        rows: head.rows,
      });
      return;
    case "blob":
    case "file": {
      const query = {
        archiveId,
        backend,
        prefix: String(head.prefix),
        path: String(head.path),
        blob: typeof head.blob === "string" ? head.blob : null,
        contentType: typeof head.contentType === "string" ? head.contentType : null,
        blobOnly: head.t === "blob" ? "1" : null,
      };
      await admin.put("/import/file", query, head.len ?? 0, records.body());
      if (head.t === "blob") counts.blobs++;
      else counts.files++;
      counts.bytes += head.len ?? 0;
      break;
    }
    case "oauth":
      await admin.post("/import/oauth", { archiveId, entries: head.entries });
      return;
  }
  progress.show(counts);
}

function keyMismatch(file: string, checked: Checked, theirs: string | null): ArchiveError {
  const name = path.basename(file);
  return new ArchiveError(
    "key_mismatch",
    `this vault signs cap tokens with another key (fingerprint ${theirs ?? "none"}) than the archive's ` +
      `(${checked.keyFingerprint}), so its caps would not verify; nothing was imported. Give the vault the archive's key, ` +
      `then import again:\n  local vault: stop it, run \`capvault import ${name} --write-key <state folder>\`, start it\n` +
      `  Cloudflare: \`capvault import ${name} --print-key | npx wrangler secret put CAPVAULT_TOKEN_KEY\``,
  );
}

/** Writes the archive's key as `<state>/token-key` (mode 0600), keeping any other key beside it. */
async function writeKeyInto(input: CommandInput, state: string, checked: Checked): Promise<void> {
  const target = path.join(state, "token-key");
  const current = await readFile(target, "utf8").then(
    (text) => text.trim(),
    () => null,
  );
  if (current === checked.tokenKey) {
    input.io.stderr.write("the vault already has the archive's token key\n");
    return;
  }
  if (current !== null) await copyFile(target, `${target}.before-import`);
  await writeFile(target, `${checked.tokenKey}\n`, { mode: 0o600 });
  input.io.stderr.write(
    `wrote the archive's token key into the state folder${current !== null ? " (the old one is in token-key.before-import: caps minted under it no longer verify)" : ""}; start the vault, then import again\n`,
  );
}

/** The vault stages at most this many caps a call (root-registry.ts STAGE_CAPS) ... */
const CAPS_PER_CALL = 4;
/** ... in a JSON body of at most 512 KiB (worker/admin-transfer-routes.ts), with room for the call's own fields. */
export const CALL_BYTES = 512 * 1024 - 4096;

/** A cap as an archive carries it: what the split below needs of it. */
export interface ArchivedCap {
  record: { key: string };
  children: unknown[];
  audit: unknown[];
}

/** The rest of one staged cap (`POST /admin/import/cap-page`): more children, more audit lines after those staged. */
export interface CapPage {
  key: string;
  children: unknown[];
  audit: unknown[];
}

/** One staging call, then the pages that finish its caps (only a cap too large for a call has any). */
export interface StagingCall<T> {
  caps: T[];
  pages: CapPage[];
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) + 1;

/**
 * An archive record's caps (up to 20, up to 2 MiB, one cap alone up to ~2 MiB)
 * as the calls the vault takes: up to 4 caps and 512 KiB a call. A cap larger
 * than a call is staged alone with its oldest audit lines and first children,
 * and the rest follows in pages; its audit stays oldest first.
 */
export function stagingCalls<T extends ArchivedCap>(caps: readonly T[]): StagingCall<T>[] {
  const calls: StagingCall<T>[] = [];
  let call: T[] = [];
  let bytes = 0;
  const flush = () => {
    if (call.length > 0) calls.push({ caps: call, pages: [] });
    call = [];
    bytes = 0;
  };
  for (const cap of caps) {
    const size = jsonBytes(cap);
    if (size > CALL_BYTES) {
      flush();
      calls.push(splitCap(cap));
      continue;
    }
    if (call.length === CAPS_PER_CALL || bytes + size > CALL_BYTES) flush();
    call.push(cap);
    bytes += size;
  }
  flush();
  return calls;
}

/** One cap over a call's bytes: its record with what fits, then pages of the rest, audit lines before children. */
function splitCap<T extends ArchivedCap>(cap: T): StagingCall<T> {
  const items = [
    ...cap.audit.map((line) => ({ part: "audit" as const, item: line })),
    ...cap.children.map((child) => ({ part: "children" as const, item: child })),
  ];
  const head = { ...cap, audit: [] as unknown[], children: [] as unknown[] };
  let room = CALL_BYTES - jsonBytes(head);
  let target: { audit: unknown[]; children: unknown[] } = head;
  const pages: CapPage[] = [];
  for (const { part, item } of items) {
    const size = jsonBytes(item);
    if (size > room) {
      const page: CapPage = { key: cap.record.key, audit: [], children: [] };
      pages.push(page);
      target = page;
      room = CALL_BYTES - jsonBytes(page);
    }
    target[part].push(item);
    room -= size;
  }
  return { caps: [head], pages };
}
