import { parseGrantRequest } from "../../shared/grant-request.ts";
import { MAX_KEY_BYTES, utf8Length } from "../../shared/rel-path.ts";
import { isSubset } from "../../shared/rights.ts";
import type { CapPick, ModelAnswer, VaultRequest } from "./model-requests.ts";
import { effective, empty, error, idOf, json, ModelState, noSuchCap, parseJsonBody } from "./model-state.ts";

export abstract class CapsModel extends ModelState {
  protected info(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    return {
      observation: json(200, {
        id: idOf(cap.role),
        rights: cap.rights,
        label: cap.label,
        createdAt: "<time>",
        expiresAt: cap.expires ? "<time>" : null,
        parent: cap.parent === null ? null : idOf(cap.parent),
        // The random sequences mint bearer caps only; holder-bound ones are tested apart (issue 20).
        holder: null,
        limits: effective(cap.quotas),
        usage: this.usage(cap.levels.join("")),
      }),
    };
  }

  protected revoke(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    this.killSubtree(cap);
    if (cap.parent !== null) this.forgetChild(this.caps[cap.parent]!, cap.role);
    return { observation: empty(204) };
  }

  protected subdir(request: VaultRequest & { op: "subdir" }): ModelAnswer {
    if (!this.live(request.cap)) return { observation: noSuchCap() };
    const body = parseJsonBody(request.body);
    if (!body.ok) return { observation: body.observation };
    const grant = parseGrantRequest(body.value);
    if (!grant.ok) return { observation: error(grant.error.code) };
    const access = this.authorize(request.cap, ["subdir"], grant.value.path, { rootAllowed: true });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    const rights = grant.value.rights ?? cap.rights;
    if (!isSubset(rights, cap.rights)) return { observation: error("forbidden") };
    const levels = path.text === "" ? cap.levels : [...cap.levels, `${path.text}/`];
    const rootKey = levels.join("");
    if (utf8Length(rootKey) >= MAX_KEY_BYTES) return { observation: error("invalid_path") };
    // A child's limits are never looser than its parent's (it may set one its parent lacks).
    const own = { maxBytes: grant.value.limits?.maxBytes ?? null, maxFiles: grant.value.limits?.maxFiles ?? null };
    const inherited = effective(cap.quotas);
    if (
      (own.maxBytes !== null && inherited.maxBytes !== null && own.maxBytes > inherited.maxBytes) ||
      (own.maxFiles !== null && inherited.maxFiles !== null && own.maxFiles > inherited.maxFiles)
    )
      return { observation: error("bad_request") };
    // The new root must not be a file, nor lie beneath one.
    if (this.someAncestorIsFile(rootKey)) return { observation: error("conflict") };

    const role = this.caps.length;
    this.caps.push({
      role,
      parent: cap.role,
      levels,
      rights,
      label: grant.value.label,
      expires: cap.expires || grant.value.ttlSeconds !== null,
      alive: true,
      path: path.text,
      children: [],
      quotas:
        own.maxBytes === null && own.maxFiles === null ? cap.quotas : [...cap.quotas, { prefix: rootKey, ...own }],
      historyFrom:
        grant.value.history === "all" ? cap.historyFrom : Math.max(this.journal.newestId + 1, cap.historyFrom),
    });
    cap.children.push(role);
    return {
      observation: json(201, {
        token: `<token:${role}>`,
        url: `<url:${role}>`,
        id: idOf(role),
        rights,
        expiresAt: this.caps[role]!.expires ? "<time>" : null,
      }),
      minted: role,
    };
  }

  protected childrenOf(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    if (!cap.rights.includes("subdir")) return { observation: error("forbidden") };
    const children = cap.children.map((role) => {
      const child = this.caps[role]!;
      return {
        id: idOf(role),
        label: child.label,
        path: child.path,
        rights: child.rights,
        createdAt: "<time>",
        expiresAt: child.expires ? "<time>" : null,
      };
    });
    return { observation: json(200, { children, cursor: null }) };
  }

  protected revokeChild(pick: CapPick, childPick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    if (!cap.rights.includes("subdir")) return { observation: error("forbidden") };
    if (!("role" in childPick) || !cap.children.includes(childPick.role)) return { observation: error("not_found") };
    this.killSubtree(this.caps[childPick.role]!);
    this.forgetChild(cap, childPick.role);
    return { observation: empty(204) };
  }
}
