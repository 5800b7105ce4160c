import { DurableObject } from "cloudflare:workers";
import type { GrantRequest } from "../shared/grant-request.ts";
import { childChain, NO_LIMITS } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { childRoot, parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Retention } from "../shared/retention.ts";
import { RIGHTS, type Right } from "../shared/rights.ts";
import { digestToken, mintToken } from "../shared/token.ts";
import type { Backend, MintedCap, ReissueStep, RootList } from "../shared/wire-types.ts";
import { checkR2Format, r2FormatChecked } from "../storage-adapters/r2-format.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { CapObject, RevokeOutcome } from "./cap-object.ts";
import { type CapRef, isoOrNull } from "./cap-record.ts";
import { holderField, requestedBinding } from "./holder-binding.ts";
import { LegacyReissue, type ReissueRequest } from "./legacy-reissue.ts";
import { decodeCursor, encodeCursor, parseLimit } from "./list-cursor.ts";
import type { ObjectEnv } from "./object-env.ts";
import { capObjectStub } from "./object-stubs.ts";
import { checkRoot } from "./path-check.ts";
import { blockedBy, type Migration, migrateOnWake } from "./state-migrations.ts";

/** The registry's migrations (state-migrations.ts): format 2 only stamps it, its `root:<id>` entries unchanged. */
const REGISTRY_MIGRATIONS: readonly Migration[] = [{ to: 2, what: "the format stamp", up() {} }];

/** Key prefix of the registry's entries: `root:<id>`. */
const ROOT_KEY_PREFIX = "root:";

/** What the registry stores per root: the admin's view of it, and the digest that names its object. No token. */
interface RegisteredRoot extends CapRef {
  label: string | null;
  backend: Backend;
  prefix: string;
  rights: Right[];
  createdAt: number;
  expiresAt: number | null;
  retention?: Retention;
  /** The format-0 root this one re-issues (legacy-reissue.ts); absent on minted roots. */
  reissuedFrom?: string;
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

  private cap(key: string): DurableObjectStub<CapObject> {
    return capObjectStub(this.env, key);
  }
}
