import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { expiry } from "./format.ts";
import { rightBadges } from "./header.ts";
import { attempt, say } from "./status.ts";
import type { CapTreeNode } from "./wire.ts";

/**
 * The caps derived from this one, drawn as a tree (ids and what each may do,
 * never a token). This cap can revoke any of them; each takes its whole
 * subtree with it.
 */
export function treeView(ctx: Ctx): HTMLElement {
  const body = h("div", { className: "tree-body" }, h("p", {}, "Loading…"));
  const load = async () => {
    const tree = await ctx.api.tree();
    const top = h(
      "li",
      {},
      h(
        "div",
        { className: "node self" },
        h("strong", {}, ctx.info.label ?? "(no label)"),
        " ",
        h("code", {}, tree.id),
        " (this cap)",
      ),
      tree.children.length
        ? h("ul", {}, ...tree.children.map(node))
        : h("p", { className: "note" }, "No caps derived from this one yet."),
    );
    fill(
      body,
      h("ul", { className: "tree" }, top),
      tree.truncated ? h("p", { className: "note" }, "The tree goes on beyond what is shown.") : null,
    );
  };
  const node = (c: CapTreeNode): HTMLElement => {
    const revoke = async () => {
      if (!confirm(`Revoke "${c.label ?? c.id}" and every cap minted from it? This cannot be undone.`)) return;
      if (await attempt(() => ctx.api.revokeBelow(c.id))) {
        say(`Revoked ${c.label ?? c.id}`);
        await attempt(load);
      }
    };
    return h(
      "li",
      {},
      h(
        "div",
        { className: "node", "data-id": c.id },
        h("strong", {}, c.label ?? "(no label)"),
        " ",
        h("code", {}, c.id),
        h(
          "div",
          {},
          c.path === "" ? "same folder" : h("span", {}, "folder ", h("code", {}, `${c.path}/`)),
          " ",
          rightBadges(c.rights),
        ),
        h("div", { className: "expiry" }, expiry(c.expiresAt)),
        h("button", { type: "button", className: "danger", onclick: () => void revoke() }, "Revoke"),
      ),
      c.children.length ? h("ul", {}, ...c.children.map(node)) : null,
    );
  };
  void attempt(load);
  return h("section", { className: "tree-view" }, h("h2", {}, "Delegation"), body);
}
