import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { crumbs, join, size, when } from "./format.ts";
import { download, preview } from "./preview.ts";
import { attempt, report, say } from "./status.ts";
import { dropZone, progressRow, uploadFile } from "./upload.ts";
import type { ListEntry } from "./wire.ts";

/** Folders made in this page that hold nothing yet: storage has no empty folders, so they exist here until a file lands. */
const newFolders = new Set<string>();

/**
 * The file browser of one folder: breadcrumbs from the cap's root (the
 * vault never tells where that root is), folders first, pages of 100, and
 * only the controls the cap's rights allow.
 */
export function filesView(ctx: Ctx, dir: string, open: (dir: string) => void): HTMLElement {
  const entries: ListEntry[] = [];
  let cursor: string | null = null;
  const table = h("tbody");
  const more = h("button", { type: "button", className: "more", hidden: true }, "Load more");
  const pane = h("div", { className: "preview-pane" });
  const uploads = h("ul", { className: "uploads" });
  const render = () => {
    // Folders first, then names in the vault's own order.
    const sorted = [...entries.filter((e) => e.type === "dir"), ...entries.filter((e) => e.type === "file")];
    fill(table, ...sorted.map((e) => row(ctx, dir, e, open, reload, pane)));
    if (sorted.length === 0)
      fill(table, h("tr", {}, h("td", { colspan: 4, className: "empty" }, "This folder is empty.")));
    more.hidden = cursor === null;
  };
  const loadPage = async () => {
    try {
      const page = await ctx.api.list(dir, cursor);
      entries.push(...page.entries);
      cursor = page.cursor;
      if (page.entries.length > 0) newFolders.delete(dir);
    } catch (err) {
      // A folder made here a moment ago is not in storage yet.
      if (!(newFolders.has(dir) && (err as { code?: string }).code === "not_found")) throw err;
    }
    render();
  };
  const reload = () => open(dir);
  more.addEventListener("click", () => void attempt(loadPage));

  const upload = async (files: File[]) => {
    for (const file of files) {
      const { row: line, bar } = progressRow(file);
      uploads.append(line);
      const done = await attempt(() => uploadFile(ctx.api.fileUrl(join(dir, file.name)), file, bar));
      line.remove();
      if (!done) return;
      say(`Uploaded ${file.name}`);
    }
    reload();
  };

  const list = ctx.can("list")
    ? h(
        "table",
        { className: "entries" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", {}, "Name"), h("th", {}, "Size"), h("th", {}, "Modified"), h("th", {}, "Actions")),
        ),
        table,
      )
    : h("p", {}, "This cap cannot list folders.");
  const zone = h("div", { className: "zone" }, list, more);
  if (ctx.can("write")) dropZone(zone, (files) => void upload(files));
  if (ctx.can("list")) void attempt(loadPage);
  return h(
    "section",
    { className: "files" },
    breadcrumbs(dir, open),
    toolbar(ctx, dir, open, upload),
    uploads,
    zone,
    pane,
  );
}

function breadcrumbs(dir: string, open: (dir: string) => void): HTMLElement {
  const items = crumbs(dir).map((c, i, all) =>
    h(
      "li",
      {},
      i === all.length - 1
        ? h("span", { "aria-current": "location" }, c.name)
        : h("button", { type: "button", className: "link", onclick: () => open(c.path) }, c.name),
    ),
  );
  return h("nav", { className: "crumbs", "aria-label": "Folder" }, h("ol", {}, ...items));
}

function toolbar(ctx: Ctx, dir: string, open: (dir: string) => void, upload: (files: File[]) => void): HTMLElement {
  const bar = h("div", { className: "toolbar" });
  if (ctx.can("write")) {
    const input = h("input", { type: "file", multiple: true, id: "upload-input", className: "visually-hidden" });
    input.addEventListener("change", () => {
      upload([...(input.files ?? [])]);
      input.value = "";
    });
    const name = h("input", {
      type: "text",
      name: "folder",
      placeholder: "new folder",
      "aria-label": "New folder name",
      required: true,
    });
    const form = h("form", { className: "inline" }, name, h("button", { type: "submit" }, "New folder"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const path = join(dir, name.value.replace(/^\/+|\/+$/g, ""));
      newFolders.add(path);
      open(path);
    });
    bar.append(
      h("label", { for: "upload-input", className: "button", tabindex: 0, onkeydown: clickOnEnter }, "Upload files"),
      input,
      form,
    );
    bar.append(h("span", { className: "hint" }, "or drop files on the list"));
  }
  if (ctx.can("subdir")) {
    bar.append(h("button", { type: "button", onclick: () => ctx.share(dir) }, "Share this folder"));
  }
  return bar;
}

function clickOnEnter(e: Event): void {
  const key = (e as KeyboardEvent).key;
  if (key === "Enter" || key === " ") {
    e.preventDefault();
    (e.currentTarget as HTMLElement).click();
  }
}

function row(
  ctx: Ctx,
  dir: string,
  e: ListEntry,
  open: (dir: string) => void,
  reload: () => void,
  pane: HTMLElement,
): HTMLElement {
  const path = join(dir, e.name);
  const isDir = e.type === "dir";
  const show = async () => {
    fill(pane, h("p", {}, "Loading preview…"));
    try {
      fill(pane, await preview(ctx.api, path, e.size ?? 0));
    } catch (err) {
      fill(pane);
      report(err);
    }
  };
  const name = isDir
    ? h("button", { type: "button", className: "link dir", onclick: () => open(path) }, `${e.name}/`)
    : ctx.can("read")
      ? h("button", { type: "button", className: "link file", onclick: () => void show() }, e.name)
      : h("span", {}, e.name);
  const actions = h("div", { className: "actions" });
  if (!isDir && ctx.can("read")) {
    actions.append(
      h("button", { type: "button", onclick: () => void attempt(() => download(ctx.api, path)) }, "Download"),
    );
  }
  if (!isDir && ctx.can("write") && ctx.can("delete")) {
    const rename = async () => {
      const to = prompt(`Move or rename "${path}" to (a path from the root):`, path);
      if (!to || to === path) return;
      if (await attempt(() => ctx.api.move(path, to))) {
        say(`Moved ${path} to ${to}`);
        reload();
      }
    };
    actions.append(h("button", { type: "button", onclick: () => void rename() }, "Rename"));
  }
  if (!isDir && ctx.can("delete")) {
    const remove = async () => {
      if (!confirm(`Delete "${path}"? This cannot be undone.`)) return;
      if (await attempt(() => ctx.api.remove(path))) {
        say(`Deleted ${path}`);
        reload();
      }
    };
    actions.append(h("button", { type: "button", className: "danger", onclick: () => void remove() }, "Delete"));
  }
  return h(
    "tr",
    {},
    h("td", {}, name),
    h("td", {}, isDir ? "" : size(e.size)),
    h("td", {}, when(e.modified)),
    h("td", {}, actions),
  );
}
