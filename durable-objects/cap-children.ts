import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CapTree, ChildPage } from "../shared/wire-types.ts";
import type { CapAudit } from "./cap-audit.ts";
import type { CapAuthorize } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";
import type { ChildRecord } from "./cap-record.ts";
import type { RevokeOutcome } from "./cap-revocation.ts";
import { CHILD, removeChild } from "./child-index.ts";
import { childPage } from "./child-page.ts";
import {
  DELEGATION_TREE_MAX_NODES,
  type DelegationChild,
  liveChildren,
  walkDelegationTree,
} from "./delegation-tree.ts";
import { capObjectStub } from "./object-stubs.ts";

/**
 * The caps minted below this one, as its holder sees them: its own children
 * by page, the delegation tree within fixed bounds (durable-objects/delegation-tree.ts),
 * and revoking any of them with its subtree.
 */
export class CapChildren {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly audit: CapAudit,
  ) {}

  async listChildren(rawCursor: string | null, rawLimit: string | null): Promise<Result<ChildPage>> {
    const admitted = await this.gate.authorize({ rights: ["subdir"], refusal: "listChildrenNeedsSubdir" });
    if (!admitted.ok) return admitted;
    return childPage(this.host.storage, rawCursor, rawLimit);
  }

  async tree(): Promise<Result<CapTree>> {
    const admitted = await this.gate.authorize({ rights: ["subdir"], refusal: "treeNeedsSubdir" });
    if (!admitted.ok) return admitted;
    return ok((await this.walk(admitted.value.cap.id)).tree);
  }

  /** For an ancestor's tree walk only (objects call it, no route does): a dead cap has no children. */
  async delegationChildren(limit: number): Promise<Result<DelegationChild[]>> {
    if (!(await this.gate.live())) return ok([]);
    return liveChildren(this.host.storage, limit);
  }

  async forgetChild(id: string): Promise<null> {
    await removeChild(this.host.storage, id);
    return null;
  }

  /**
   * Revokes a cap anywhere below this one (as far as `tree` reaches), with its
   * subtree: the holder of an ancestor could revoke it with that ancestor anyway.
   */
  async revokeDescendant(id: string): Promise<Result<RevokeOutcome>> {
    const admitted = await this.gate.authorize({ rights: ["subdir"], refusal: "revokeChildNeedsSubdir" });
    if (!admitted.ok) return admitted;
    const found = (await this.walk(admitted.value.cap.id)).index.get(id);
    if (!found) return refuse("noSuchChild");
    if (found.parent === null) return this.revokeChild(id);
    const outcome = await capObjectStub(this.host.env, found.key)
      .revokeSubtree()
      .catch(() => refuse("unavailable"));
    // Unreached: nothing was revoked, so there is nothing to audit.
    if (!outcome.ok) return outcome;
    const parent = found.parent;
    return this.audit.run<RevokeOutcome>(
      "revoke_child",
      found.path,
      async () => {
        await capObjectStub(this.host.env, parent)
          .forgetChild(id)
          .catch(() => null);
        return outcome;
      },
      () => id,
    );
  }

  async revokeChild(id: string): Promise<Result<RevokeOutcome>> {
    const admitted = await this.gate.authorize({ rights: ["subdir"], refusal: "revokeChildNeedsSubdir" });
    if (!admitted.ok) return admitted;
    const child = typeof id === "string" ? await this.host.storage.get<ChildRecord>(CHILD + id) : undefined;
    if (!child || (child.expiresAt !== null && child.expiresAt <= Date.now())) return refuse("noSuchChild");
    const outcome = await capObjectStub(this.host.env, child.key)
      .revokeSubtree()
      .catch(() => refuse("unavailable"));
    // Unreached: nothing was revoked, so there is nothing to audit.
    if (!outcome.ok) return outcome;
    return this.audit.run<RevokeOutcome>(
      "revoke_child",
      child.path,
      async () => {
        await removeChild(this.host.storage, id);
        return outcome;
      },
      () => child.id,
    );
  }

  private async walk(id: string) {
    const own = await liveChildren(this.host.storage, DELEGATION_TREE_MAX_NODES + 1);
    return walkDelegationTree(id, own.ok ? own.value : [], (key, limit) =>
      capObjectStub(this.host.env, key).delegationChildren(limit),
    );
  }
}
