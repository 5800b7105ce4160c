import type { GrantRequest } from "../shared/grant-request.ts";
import { childChain, NO_LIMITS } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { isSubset } from "../shared/rights.ts";
import { digestToken, mintToken } from "../shared/token.ts";
import type { MintedCap } from "../shared/wire-types.ts";
import type { CapAudit } from "./cap-audit.ts";
import { type CapAuthorize, noSuchCap } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";
import { type ChildRecord, delegationDepth, isoOrNull, MAX_DELEGATION_DEPTH } from "./cap-record.ts";
import type { CapRevocation } from "./cap-revocation.ts";
import { childHistoryFrom } from "./cap-versions.ts";
import { addChild, removeChild } from "./child-index.ts";
import { childBinding, holderField } from "./holder-binding.ts";
import { capObjectStub } from "./object-stubs.ts";

/**
 * Minting a child cap: a subtree (or the same root) with no more rights, no
 * later expiry, a delegation depth within the bound, the parent's quotas and
 * retention inherited, and a history floor no lower than the parent's. The
 * child is indexed before it exists, so a revocation racing the mint reaches it.
 */
export class CapMint {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly audit: CapAudit,
    private readonly revocation: CapRevocation,
  ) {}

  async mintChild(request: GrantRequest, origin: string): Promise<Result<MintedCap>> {
    return this.audit.run(
      "subdir",
      request.path,
      () => this.mint(request, origin),
      (minted) => minted.id,
    );
  }

  private async mint(request: GrantRequest, origin: string): Promise<Result<MintedCap>> {
    const access = await this.gate.authorize(
      { rights: ["subdir"] },
      {
        kind: "childRoot",
        raw: [request.path],
        judge: (cap) => {
          const rights = request.rights ?? cap.rights;
          return isSubset(rights, cap.rights) ? ok(rights) : refuse("rightsNotHeld");
        },
      },
    );
    if (!access.ok) return access;
    const {
      cap,
      paths: [root],
      storage,
      judged: rights,
    } = access.value;
    // holder binding (issue 20, holder-binding.ts): never looser than the parent's.
    const binding = await childBinding(cap, request);
    if (!binding.ok) return binding;
    const depth = delegationDepth(cap) + 1;
    if (depth > MAX_DELEGATION_DEPTH) return refuse("delegationTooDeep", { limit: MAX_DELEGATION_DEPTH });
    // The child's quota rule governs its own subtree, named as the journal names paths.
    const quotas = childChain(cap.quotas, root.root.slice(1).join(""), request.limits ?? NO_LIMITS);
    if (!quotas.ok) return quotas;
    const prepared = await storage.prepareRoot(root, { create: false });
    if (!prepared.ok) return prepared;
    const historyFrom = await childHistoryFrom(this.host.env, cap, request.history);
    if (!historyFrom.ok) return historyFrom;

    const now = Date.now();
    const requested = request.ttlSeconds === null ? null : now + request.ttlSeconds * 1000;
    const expiresAt = cap.expiresAt === null ? requested : Math.min(requested ?? Infinity, cap.expiresAt);
    const minted = await mintToken(this.host.env.CAPVAULT_TOKEN_KEY, binding.value !== null);
    if (!minted.ok) return minted;
    const token = minted.value;
    const { key, id } = await digestToken(token);
    const child: ChildRecord = {
      id,
      key,
      label: request.label,
      path: root.path.text,
      rights,
      createdAt: now,
      expiresAt,
    };

    // Record the child before it exists, so a revocation that interleaves
    // with this mint (the input gate opens at every await) already sees it.
    const added = await addChild(this.host.storage, child);
    if (!added.ok) return added;
    const stub = capObjectStub(this.host.env, key);
    const made = await stub.init({
      id,
      key,
      backend: cap.backend,
      root: root.root,
      rights,
      label: request.label,
      createdAt: now,
      expiresAt,
      parent: { id: cap.id, key: cap.key },
      depth,
      // Retention is the root's: a child inherits it, never sets its own.
      ...(cap.retention ? { retention: cap.retention } : {}),
      // Quotas are inherited like retention; a child's own rule only tightens them.
      ...(quotas.value.length > 0 ? { quotas: quotas.value } : {}),
      // The child's history starts at its mint unless asked otherwise, never before its parent's.
      ...(historyFrom.value !== undefined ? { historyFrom: historyFrom.value } : {}),
      ...holderField(binding.value),
    });
    if (!made.ok) {
      // No child was made: the record added above names nothing. (Refused
      // because this cap's revocation reached the child first: say so as a dead cap does.)
      await removeChild(this.host.storage, id);
      return (await this.gate.live()) ? made : noSuchCap();
    }
    if (!(await this.gate.live())) {
      // Revoked while the child was being made: the cascade may have run
      // before the child's init landed, so revoke it again ourselves, and
      // leave it to the alarm if even that fails.
      const undone = await stub.revokeSubtree().catch(() => null);
      // Undone: forget it, or a leaf revoked without an alarm (its cascade
      // found no children) would keep this record for good.
      if (undone?.ok) await removeChild(this.host.storage, id);
      else await this.revocation.leaveForAlarm({ id, key });
      return noSuchCap();
    }
    return ok({ token, url: `${origin}/object/${token}`, id, rights, expiresAt: isoOrNull(expiresAt) });
  }
}
