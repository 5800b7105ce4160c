import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { size, when } from "./format.ts";
import { newestWins } from "./newest.ts";
import { previewVersion } from "./preview.ts";
import { attempt, report, say } from "./status.ts";
import type { Version } from "./wire.ts";

/** Who made a version: this cap by name, any other by its public id (never a token). */
function actorOf(ctx: Ctx, actor: string): HTMLElement {
  if (actor === ctx.info.id) return h("span", { className: "actor self" }, "this cap");
  if (actor === ctx.info.parent) return h("span", { className: "actor" }, "parent cap ", h("code", {}, actor));
  return h("code", { className: "actor" }, actor);
}

/**
 * One file's versions, newest first: what happened, who, size and time; each
 * version can be viewed, restored (read + write: a restore is a new write)
 * and redacted (delete), as the cap's rights allow. The vault checks each
 * again. A cap minted by Share sees only what was written since its mint,
 * unless it was minted with the earlier history.
 */
export function historyPanel(ctx: Ctx, path: string, changed: () => void): HTMLElement {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const body = h("tbody", {}, h("tr", {}, h("td", { colspan: 4 }, "Loading…")));
  const more = h("button", { type: "button", className: "more", hidden: true }, "Older versions");
  const view = h("div", { className: "version-view" });
  const versions: Version[] = [];
  let cursor: string | null = null;
  const canRestore = ctx.can("read") && ctx.can("write");

  const render = () => {
    fill(body, ...versions.map(row));
    if (versions.length === 0)
      fill(body, h("tr", {}, h("td", { colspan: 4, className: "empty" }, "No versions this cap may see.")));
    more.hidden = cursor === null;
  };
  // As the file list: the versions shown are one whole answer, and an older request's answer never paints over a newer one's.
  const ticket = newestWins();
  const load = async (fresh: boolean) => {
    const isNewest = ticket();
    const page = await ctx.api.versions(path, fresh ? null : cursor);
    if (!isNewest()) return;
    if (fresh) versions.length = 0;
    versions.push(...page.versions);
    cursor = page.cursor;
    render();
  };
  const reload = () => load(true);
  more.addEventListener("click", () => void attempt(() => load(false)));

  const row = (v: Version): HTMLElement => {
    const actions = h("div", { className: "actions" });
    if (v.redacted) actions.append(h("span", { className: "badge refused" }, "redacted"));
    else {
      const show = async () => {
        fill(view, h("p", {}, "Loading version…"));
        try {
          fill(view, await previewVersion(ctx.api, path, v));
        } catch (err) {
          fill(view);
          report(err);
        }
      };
      actions.append(h("button", { type: "button", onclick: () => void show() }, "View"));
      if (canRestore) {
        const restore = async () => {
          if (
            await attempt(async () => {
              await ctx.api.restore(v.id);
              await reload();
            })
          ) {
            say(
              `Restored ${path} to version ${v.id}; that restore is a new version, so it can be undone from here too.`,
            );
            changed();
          }
        };
        actions.append(h("button", { type: "button", onclick: () => void restore() }, "Restore"));
      }
      if (ctx.can("delete")) {
        const redact = async () => {
          if (
            !confirm(
              `Destroy the bytes of version ${v.id} of "${path}" for good? Its record stays. This cannot be undone.`,
            )
          )
            return;
          if (
            await attempt(async () => {
              await ctx.api.redact(v.id);
              await reload();
            })
          ) {
            fill(view);
            say(`Redacted version ${v.id} of ${path}`);
          }
        };
        actions.append(h("button", { type: "button", className: "danger", onclick: () => void redact() }, "Redact"));
      }
    }
    return h(
      "tr",
      { "data-version": v.id },
      h("td", {}, h("span", { className: "op" }, v.operation), h("div", { className: "note" }, `#${v.id}`)),
      h("td", {}, actorOf(ctx, v.actor), h("div", { className: "note" }, when(v.at))),
      h("td", {}, size(v.size ?? undefined)),
      h("td", {}, actions),
    );
  };

  void attempt(reload);
  return h(
    "section",
    { className: "history", "aria-label": `History of ${name}` },
    h("h2", {}, "History of ", h("code", {}, path)),
    ctx.info.parent
      ? h(
          "p",
          { className: "note" },
          "This cap sees the versions written since it was minted, unless it was shared with the earlier history.",
        )
      : null,
    h(
      "table",
      { className: "versions" },
      h(
        "thead",
        {},
        h("tr", {}, h("th", {}, "Version"), h("th", {}, "Who and when"), h("th", {}, "Size"), h("th", {}, "Actions")),
      ),
      body,
    ),
    more,
    view,
  );
}
