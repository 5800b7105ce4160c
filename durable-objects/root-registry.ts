import { DurableObject } from "cloudflare:workers";
import type { GrantRequest } from "../shared/grant-request.ts";
import { childChain, NO_LIMITS } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { childRoot, parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Retention } from "../shared/retention.ts";
import { RIGHTS } from "../shared/rights.ts";
import { digestToken, mintToken } from "../shared/token.ts";
import type { Backend, MintedCap, ReissueStep, RootList } from "../shared/wire-types.ts";
import { checkR2Format, r2FormatChecked } from "../storage-adapters/r2-format.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { CapObject, RevokeOutcome } from "./cap-object.ts";
import { isoOrNull } from "./cap-record.ts";
import { holderField, requestedBinding } from "./holder-binding.ts";

import { isCapKey, isCapRef, isRootLevels } from "./import-check.ts";

import { LegacyReissue, type ReissueRequest } from "./legacy-reissue.ts";

import { decodeCursor, encodeCursor, parseLimit } from "./list-cursor.ts";
import type { ObjectEnv } from "./object-env.ts";
import { capObjectStub } from "./object-stubs.ts";
import { checkRoot } from "./path-check.ts";
import { type RegisteredRoot, ROOT_KEY_PREFIX } from "./registry-entry.ts";

export type { RegisteredRoot };

import { blockedBy, type Migration, migrateOnWake } from "./state-migrations.ts";

/** The registry's migrations (state-migrations.ts): format 2 only stamps it, its `root:<id>` entries unchanged. */
const REGISTRY_MIGRATIONS: readonly Migration[] = [{ to: 2, what: "the format stamp", up() {} }];

/** An import in progress (docs/export-import.md): `{ archiveId, startedAt }`, from its first call to its commit's end. */
const IMPORT_OPEN = "import:open";
/** Set once the import's commit began: from then on the commit is finished, by the admin's calls or by the alarm. */
const IMPORT_COMMITTING = "import:committing";
/** A staged root (`import:root:<id>`, a RegisteredRoot) and a staged cap (`import:cap:<key>`), each until committed. */
const STAGED_ROOT = "import:root:";
const STAGED_CAP = "import:cap:";
/** Roots and caps made live per commit step: each cap is one call to its object. */
const COMMIT_ROOTS = 200;
const COMMIT_CAPS = 25;
/** Roots and caps staged per call. */
export const STAGE_PAGE = 100;
/**
 * Caps staged per call: each is a call to an object of its own, most of them new (a file each on the
 * local runtime), carrying up to 1,100 audit lines and 1,000 children. Measured in the hostile table
 * (`RELIABILITY_HOSTILE_CASE=admin`), each call at the 512 KiB JSON bound: 100 caps spent 1.3 s of the
 * vault's CPU and held another cap's read up 4.8 s; 10 held it up 178 ms; 4 hold it up 52-78 ms.
 */
export const STAGE_CAPS = 4;
/** How soon the alarm goes on with a commit the admin's calls stopped driving. */
const COMMIT_RETRY_MS = 2_000;

interface ImportMarker {
  archiveId: string;
  startedAt: number;
}

export interface RootRequest extends GrantRequest {
  backend: string;
  /** How much version history the root keeps (shared/retention.ts); the defaults when absent. */
  retention?: Retention;
}

/**
 * The admin's index of root caps (one instance, named "registry"). It plays
 * the parent for roots: it mints them, lists them, and revokes them by id.
 * Like a cap, it stores token digests only.
 */
export class RootRegistry extends DurableObject<ObjectEnv> {
  /** The registry's format, checked (and its state migrated) before any call: state-migrations.ts. */
  #blocked = blockedBy(migrateOnWake(this.ctx.storage, "registry", REGISTRY_MIGRATIONS, { stampEmpty: true }));

  constructor(ctx: DurableObjectState, env: ObjectEnv) {
    super(ctx, env);
    // Its state reaches the bucket: the layout's format too, once per isolate (r2-format.ts).
    if (!this.#blocked && !r2FormatChecked())
      void ctx.blockConcurrencyWhile(async () => {
        this.#blocked = blockedBy(await checkR2Format(env.BUCKET));
      });
  }

  private readonly legacy = new LegacyReissue(this.ctx.storage, () => this.env);
  /** Re-issue steps run one at a time: two admins' runs would otherwise interleave at every await. */
  private reissuing: Promise<unknown> = Promise.resolve();

  async mintRoot(request: RootRequest, origin: string): Promise<Result<MintedCap>> {
    if (this.#blocked) return this.#blocked;
    if (request.backend !== "r2" && request.backend !== "disk") return refuse("backendChoice");
    const backend: Backend = request.backend;
    const storage = selectStorage(this.env, backend);
    if (!storage) return refuse("backendNotDeployed", { backend });
    const path = parseRelPath(request.path);
    if (!path.ok) return path;
    const root = checkRoot([childRoot("", path.value)], path.value, "prefixTooLong");
    if (!root.ok) return root;
    const prefix = root.value.key;
    const binding = await requestedBinding(request);
    if (!binding.ok) return binding;
    // A root's rule governs its whole root: the journal names its paths from level 0, so its prefix is "".
    const quotas = childChain([], "", request.limits ?? NO_LIMITS);
    if (!quotas.ok) return quotas;
    const prepared = await storage.prepareRoot(root.value, { create: true });
    if (!prepared.ok) return prepared;

    const rights = request.rights ?? [...RIGHTS];
    const now = Date.now();
    const expiresAt = request.ttlSeconds === null ? null : now + request.ttlSeconds * 1000;
    const minted = await mintToken(this.env.CAPVAULT_TOKEN_KEY, binding.value !== null);
    if (!minted.ok) return minted;
    const token = minted.value;
    const { key, id } = await digestToken(token);
    await this.ctx.storage.put(ROOT_KEY_PREFIX + id, {
      id,
      key,
      label: request.label,
      backend,
      prefix,
      rights,
      createdAt: now,
      expiresAt,
      ...(request.retention ? { retention: request.retention } : {}),
    } satisfies RegisteredRoot);
    const made = await this.cap(key).init({
      id,
      key,
      backend,
      root: [prefix],
      rights,
      label: request.label,
      createdAt: now,
      expiresAt,
      parent: null,
      depth: 0,
      ...(request.retention ? { retention: request.retention } : {}),
      ...(quotas.value.length > 0 ? { quotas: quotas.value } : {}),
      ...holderField(binding.value),
    });
    if (!made.ok) return made;
    return ok({ token, url: `${origin}/object/${token}`, id, rights, expiresAt: isoOrNull(expiresAt) });
  }

  /**
   * One page of the live roots, in id order: at most `limit` (1–1,000,
   * default 1,000) of one storage read, so a registry of any size answers in
   * bounded work. Expired roots are skipped, so a page may be short and still
   * have a cursor; the cursor is the last id read, opaque to clients.
   */
  async listRoots(rawCursor: string | null = null, rawLimit: string | null = null): Promise<Result<RootList>> {
    if (this.#blocked) return this.#blocked;
    const limit = parseLimit(rawLimit);
    if (!limit.ok) return limit;
    const after = decodeCursor(rawCursor);
    if (!after.ok) return after;
    const now = Date.now();
    const records = await this.ctx.storage.list<RegisteredRoot>({
      prefix: ROOT_KEY_PREFIX,
      limit: limit.value,
      ...(after.value === null ? {} : { startAfter: ROOT_KEY_PREFIX + after.value }),
    });
    const roots = [...records.values()]
      .filter((r) => r.expiresAt === null || r.expiresAt > now)
      .map((r) => ({
        id: r.id,
        label: r.label,
        backend: r.backend,
        prefix: r.prefix,
        rights: r.rights,
        createdAt: new Date(r.createdAt).toISOString(),
        expiresAt: isoOrNull(r.expiresAt),
      }));
    const last = [...records.keys()].at(-1);
    const full = records.size === limit.value && last !== undefined;
    return ok({ roots, cursor: full ? encodeCursor(last.slice(ROOT_KEY_PREFIX.length)) : null });
  }

  async revokeRoot(id: string): Promise<Result<RevokeOutcome>> {
    if (this.#blocked) return this.#blocked;
    const record =
      typeof id === "string" ? await this.ctx.storage.get<RegisteredRoot>(ROOT_KEY_PREFIX + id) : undefined;
    if (!record) return refuse("noSuchRoot");
    // A DO RPC must answer with a Result, never reject: an unreachable root is a storage failure.
    const outcome = await this.cap(record.key)
      .revokeSubtree()
      .catch(() => refuse("unavailable"));
    if (!outcome.ok) return outcome;
    await this.ctx.storage.delete(ROOT_KEY_PREFIX + id);
    return outcome;
  }

  /** One bounded step of re-issuing the caps of state format 0 (legacy-reissue.ts, docs/upgrading.md). */
  async reissueLegacy(request: ReissueRequest, origin: string): Promise<Result<ReissueStep>> {
    if (this.#blocked) return this.#blocked;
    const step = this.reissuing.then(() => this.legacy.step(request, origin).catch(() => refuse("unavailable")));
    this.reissuing = step;
    return step;
  }

  async forgetRoot(id: string): Promise<null> {
    if (this.#blocked) return null;
    await this.ctx.storage.delete(ROOT_KEY_PREFIX + id);
    return null;
  }

  // ---- vault export and import (docs/export-import.md); admin routes only ----

  /** A page of the registry's roots as stored (digest and prefix included: admin eyes only), in id order. */
  async exportRoots(rawCursor: string | null): Promise<Result<{ roots: RegisteredRoot[]; cursor: string | null }>> {
    if (this.#blocked) return this.#blocked;
    const after = decodeCursor(rawCursor);
    if (!after.ok) return after;
    const records = await this.ctx.storage.list<RegisteredRoot>({
      prefix: ROOT_KEY_PREFIX,
      limit: STAGE_PAGE,
      ...(after.value === null ? {} : { startAfter: ROOT_KEY_PREFIX + after.value }),
    });
    const last = [...records.keys()].at(-1);
    const full = records.size === STAGE_PAGE && last !== undefined;
    return ok({ roots: [...records.values()], cursor: full ? encodeCursor(last.slice(ROOT_KEY_PREFIX.length)) : null });
  }

  /** Whether any live root exists, and the import in progress, if one is. */
  async importState(): Promise<Result<{ hasRoots: boolean; open: string | null; committing: boolean }>> {
    if (this.#blocked) return this.#blocked;
    const open = await this.ctx.storage.get<ImportMarker>(IMPORT_OPEN);
    return ok({
      hasRoots: await this.hasRoots(),
      open: open?.archiveId ?? null,
      committing: (await this.ctx.storage.get(IMPORT_COMMITTING)) !== undefined,
    });
  }

  /**
   * Opens (or resumes) the import of one archive. Refused while another is
   * open, and, unless `merge`, when the vault already has a live root.
   */
  async importBegin(archiveId: string, merge: boolean): Promise<Result<{ committing: boolean }>> {
    if (this.#blocked) return this.#blocked;
    if (typeof archiveId !== "string" || !/^[0-9a-f]{32}$/.test(archiveId)) return refuse("importMalformed");
    const open = await this.ctx.storage.get<ImportMarker>(IMPORT_OPEN);
    if (open && open.archiveId !== archiveId) return refuse("importOtherStaged");
    if (open) return ok({ committing: (await this.ctx.storage.get(IMPORT_COMMITTING)) !== undefined });
    if (!merge && (await this.hasRoots())) return refuse("importNotEmpty");
    await this.ctx.storage.put(IMPORT_OPEN, { archiveId, startedAt: Date.now() } satisfies ImportMarker);
    return ok({ committing: false });
  }

  /** Whether `archiveId`'s import is open and not yet committing: the only time its records may be written. */
  async importWritable(archiveId: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    const open = await this.ctx.storage.get<ImportMarker>(IMPORT_OPEN);
    if (!open || open.archiveId !== archiveId) return refuse("importNotStaged");
    if ((await this.ctx.storage.get(IMPORT_COMMITTING)) !== undefined) return refuse("importNotStaged");
    return ok(null);
  }

  /** Stages a page of roots: kept apart from `root:` (so unlisted and unrevocable) until the commit. */
  async stageRoots(archiveId: string, roots: unknown): Promise<Result<number>> {
    if (this.#blocked) return this.#blocked;
    const writable = await this.importWritable(archiveId);
    if (!writable.ok) return writable;
    if (!Array.isArray(roots) || roots.length > STAGE_PAGE || !roots.every((r) => this.isRegisteredRoot(r)))
      return refuse("importMalformed");
    for (const root of roots as RegisteredRoot[])
      if ((await this.ctx.storage.get(ROOT_KEY_PREFIX + root.id)) !== undefined) return refuse("importCollision");
    await this.ctx.storage.put(Object.fromEntries((roots as RegisteredRoot[]).map((r) => [STAGED_ROOT + r.id, r])));
    return ok(roots.length);
  }

  /** Stages a page of caps in their own objects (cap-transfer.ts), each recorded here for the commit. */
  async stageCaps(archiveId: string, caps: unknown): Promise<Result<number>> {
    if (this.#blocked) return this.#blocked;
    const writable = await this.importWritable(archiveId);
    if (!writable.ok) return writable;
    if (!Array.isArray(caps) || caps.length > STAGE_CAPS) return refuse("importMalformed");
    for (const state of caps as { record?: unknown }[]) {
      if (!isCapRef(state?.record)) return refuse("importMalformed");
      const key = state.record.key;
      const staged = await this.cap(key)
        .stageImport(state)
        .catch(() => refuse("unavailable"));
      if (!staged.ok) return staged;
      // Live already, while this import has not begun its commit: a cap of this vault, not of the archive.
      if (staged.value === "live") return refuse("importCollision");
      await this.ctx.storage.put(STAGED_CAP + key, 1);
    }
    return ok(caps.length);
  }

  /** The rest of a cap this import staged (`POST /admin/import/cap-page`): the cap must be one it staged. */
  async stageCapPage(
    archiveId: string,
    key: unknown,
    page: unknown,
  ): Promise<Result<{ children: number; audit: number }>> {
    if (this.#blocked) return this.#blocked;
    const writable = await this.importWritable(archiveId);
    if (!writable.ok) return writable;
    if (!isCapKey(key) || (await this.ctx.storage.get(STAGED_CAP + key)) === undefined)
      return refuse("importNotStaged");
    return this.cap(key)
      .stageImportPage(page)
      .catch(() => refuse("unavailable"));
  }

  /**
   * One step of the commit: marks the import committing (durably, with an
   * alarm that finishes it if the admin's calls stop), then makes a page of
   * staged roots and caps live. `done` once nothing is left.
   */
  async commitImport(archiveId: string): Promise<Result<{ done: boolean }>> {
    if (this.#blocked) return this.#blocked;
    const open = await this.ctx.storage.get<ImportMarker>(IMPORT_OPEN);
    if (!open || open.archiveId !== archiveId) return refuse("importNotStaged");
    if ((await this.ctx.storage.get(IMPORT_COMMITTING)) === undefined) {
      await this.ctx.storage.put(IMPORT_COMMITTING, { archiveId });
      await this.ctx.storage.setAlarm(Date.now() + COMMIT_RETRY_MS);
    }
    return this.commitStep();
  }

  /**
   * Gives up the open import that has not begun its commit, a page at a time
   * (`done` once nothing is left): its staged roots and its list of staged
   * caps go; each staged cap's object keeps its unread `import:cap` until the
   * same archive is imported again. A commit that began is never undone.
   */
  async abortImport(archiveId: string): Promise<Result<{ done: boolean }>> {
    if (this.#blocked) return this.#blocked;
    const writable = await this.importWritable(archiveId);
    if (!writable.ok) return writable;
    for (const prefix of [STAGED_ROOT, STAGED_CAP]) {
      const staged = await this.ctx.storage.list({ prefix, limit: COMMIT_ROOTS });
      if (staged.size > 0) {
        await this.ctx.storage.delete([...staged.keys()]);
        return ok({ done: false });
      }
    }
    await this.ctx.storage.delete(IMPORT_OPEN);
    return ok({ done: true });
  }

  override async alarm(): Promise<void> {
    if (this.#blocked) return;
    if ((await this.ctx.storage.get(IMPORT_COMMITTING)) === undefined) return;
    const step = await this.commitStep();
    if (!step.ok || !step.value.done) await this.ctx.storage.setAlarm(Date.now() + COMMIT_RETRY_MS);
  }

  private async commitStep(): Promise<Result<{ done: boolean }>> {
    const roots = await this.ctx.storage.list<RegisteredRoot>({ prefix: STAGED_ROOT, limit: COMMIT_ROOTS });
    if (roots.size > 0) {
      const live = Object.fromEntries([...roots.values()].map((r) => [ROOT_KEY_PREFIX + r.id, r]));
      await this.ctx.storage.put(live);
      await this.ctx.storage.delete([...roots.keys()]);
    }
    const caps = await this.ctx.storage.list({ prefix: STAGED_CAP, limit: COMMIT_CAPS });
    for (const name of caps.keys()) {
      const made = await this.cap(name.slice(STAGED_CAP.length))
        .commitImport()
        .catch(() => refuse("unavailable"));
      if (!made.ok) return made;
      await this.ctx.storage.delete(name);
    }
    if (roots.size === COMMIT_ROOTS || caps.size === COMMIT_CAPS) return ok({ done: false });
    await this.ctx.storage.delete([IMPORT_COMMITTING, IMPORT_OPEN]);
    await this.ctx.storage.deleteAlarm();
    return ok({ done: true });
  }

  private async hasRoots(): Promise<boolean> {
    const page = await this.ctx.storage.list<RegisteredRoot>({ prefix: ROOT_KEY_PREFIX, limit: 1000 });
    const now = Date.now();
    // A full page of expired roots counts as roots: the vault is not shown to be empty.
    return page.size === 1000 || [...page.values()].some((r) => r.expiresAt === null || r.expiresAt > now);
  }

  private isRegisteredRoot(v: unknown): v is RegisteredRoot {
    if (!isCapRef(v)) return false;
    const r = v as unknown as Record<string, unknown>;
    return (
      (r.backend === "r2" || r.backend === "disk") &&
      selectStorage(this.env, r.backend) !== null &&
      typeof r.prefix === "string" &&
      isRootLevels([r.prefix]) &&
      Array.isArray(r.rights) &&
      (r.label === null || typeof r.label === "string") &&
      typeof r.createdAt === "number" &&
      (r.expiresAt === null || typeof r.expiresAt === "number")
    );
  }

  private cap(key: string): DurableObjectStub<CapObject> {
    return capObjectStub(this.env, key);
  }
}
