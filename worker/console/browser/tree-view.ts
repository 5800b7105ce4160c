import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { expiry } from "./format.ts";
import { rightBadges } from "./header.ts";
import { newestWins } from "./newest.ts";
import { attempt, say } from "./status.ts";
import type { CapTreeNode } from "./wire.ts";

/** Past this many caps in the tree, branches start folded, so the first level fits on a screen. */
const OPEN_UP_TO = 12;

/** A cap's name: its label, or what it reaches and may do when it has none. */
function titleOf(c: { label: string | null; path: string; rights: readonly string[] }): string {
  return c.label ?? `${c.path === "" ? "same folder" : `${c.path}/`}: ${c.rights.join(", ")}`;
}

function count(nodes: readonly CapTreeNode[]): number {
  return nodes.reduce((n, c) => n + 1 + count(c.children), 0);
}

/**
 * The caps derived from this one, drawn as a tree (ids and what each may do,
 * never a token), one line each, with a filter and folding branches. This
 * cap can revoke any of them; each takes its whole subtree with it.
 */
export function treeView(ctx: Ctx): HTMLElement {
  const body = h("div", { className: "tree-body" }, h("p", {}, "Loading…"));
  const filter = h("input", {
    type: "search",
    id: "tree-filter",
    placeholder: "label, id or folder",
    "aria-label": "Filter caps",
  });
  /** Each drawn node: what the filter matches, its element, and its branch's fold. */
  let drawn: { text: string; li: HTMLElement; fold: ((open: boolean) => void) | null; parent: number }[] = [];

  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    const keep = drawn.map((d) => q === "" || d.text.includes(q));
    // A match keeps its ancestors in view, unfolded.
    if (q !== "")
      drawn.forEach((d, i) => {
        if (!keep[i]) return;
        for (let p = d.parent; p >= 0; p = drawn[p]!.parent) {
          keep[p] = true;
          drawn[p]!.fold?.(true);
        }
      });
    drawn.forEach((d, i) => {
      d.li.hidden = !keep[i];
    });
  };
  filter.addEventListener("input", applyFilter);

  // One load per revoke: an older tree answered last must not bring back the caps just revoked.
  const ticket = newestWins();
  const load = async () => {
    const isNewest = ticket();
    const tree = await ctx.api.tree();
    if (!isNewest()) return;
    drawn = [];
    const open = count(tree.children) <= OPEN_UP_TO;
    const top = h(
      "li",
      {},
      h(
        "div",
        { className: "node self" },
        h("strong", {}, ctx.info.label ?? "this cap"),
        " ",
        h("code", {}, tree.id),
        " (this cap)",
      ),
      tree.children.length
        ? h("ul", {}, ...tree.children.map((c) => node(c, -1, open)))
        : h("p", { className: "note" }, "No caps derived from this one yet."),
    );
    fill(
      body,
      h("p", { className: "note" }, `${count(tree.children)} caps below this one.`),
      h("ul", { className: "tree" }, top),
      tree.truncated ? h("p", { className: "note" }, "The tree goes on beyond what is shown.") : null,
    );
    applyFilter();
  };
  const node = (c: CapTreeNode, parent: number, open: boolean): HTMLElement => {
    const revoke = async () => {
      if (!confirm(`Revoke "${titleOf(c)}" and every cap minted from it? This cannot be undone.`)) return;
      if (await attempt(() => ctx.api.revokeBelow(c.id))) {
        say(`Revoked ${titleOf(c)}`);
        await attempt(load);
      }
    };
    const li = h("li", {});
    const index = drawn.push({ text: `${c.label ?? ""} ${c.id} ${c.path}/`.toLowerCase(), li, fold: null, parent }) - 1;
    const card = h(
      "div",
      { className: "node", "data-id": c.id },
      h("strong", { className: c.label === null ? "unlabelled" : "" }, titleOf(c)),
      h("code", {}, c.id),
      c.path === "" ? h("span", {}, "same folder") : h("span", {}, "folder ", h("code", {}, `${c.path}/`)),
      rightBadges(c.rights),
      h("span", { className: "expiry" }, expiry(c.expiresAt)),
      h("button", { type: "button", className: "danger", onclick: () => void revoke() }, "Revoke"),
    );
    li.append(card);
    if (c.children.length) {
      const below = count(c.children);
      const list = h("ul", {}, ...c.children.map((child) => node(child, index, open)));
      const toggle = h("button", { type: "button", className: "fold" });
      const fold = (show: boolean) => {
        list.hidden = !show;
        toggle.setAttribute("aria-expanded", String(show));
        toggle.textContent = show ? `Hide the ${below} below` : `Show the ${below} below`;
      };
      toggle.addEventListener("click", () => fold(list.hidden));
      fold(open);
      drawn[index]!.fold = fold;
      card.insertBefore(toggle, card.lastChild);
      li.append(list);
    }
    return li;
  };
  void attempt(load);
  return h(
    "section",
    { className: "tree-view" },
    h("h2", {}, "Delegation"),
    h("div", { className: "toolbar" }, h("label", { for: "tree-filter" }, "Filter"), filter),
    body,
  );
}
