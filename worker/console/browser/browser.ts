import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { crumbs, join, size, when } from "./format.ts";
import { historyPanel } from "./history.ts";
import { newestWins } from "./newest.ts";
import { download, preview } from "./preview.ts";
import { attempt, report, type StatusAction, say } from "./status.ts";
import { dropZone, progressRow, uploadFile } from "./upload.ts";
import type { ListEntry, Version } from "./wire.ts";

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
  const body = h("div", { className: "files-body" });
  const uploads = h("ul", { className: "uploads" });
  // Beside the list on a wide screen, scrolled to on a narrow one: never below the fold of a long folder.
  const showInPane = (content: HTMLElement) => {
    fill(pane, content);
    body.classList.add("split");
    pane.scrollIntoView({ block: "nearest" });
  };
  const grid = h(
    "table",
    { className: "entries" },
    h(
      "thead",
      {},
      h("tr", {}, h("th", {}, "Name"), h("th", {}, "Size"), h("th", {}, "Modified"), h("th", {}, "Actions")),
    ),
    table,
  );
  const render = () => {
    // Folders first, then names in the vault's own order.
    const sorted = [...entries.filter((e) => e.type === "dir"), ...entries.filter((e) => e.type === "file")];
    fill(table, ...sorted.map((e) => row(ctx, dir, e, open, reload, showInPane)));
    if (sorted.length === 0)
      fill(table, h("tr", {}, h("td", { colspan: 4, className: "empty" }, "This folder is empty.")));
    more.hidden = cursor === null;
  };
  // The rows shown are always one whole answer: a reload keeps them (marked busy) until its own answer replaces
  // them, and an answer to an older request never paints over a newer one's.
  const ticket = newestWins();
  const load = async (fresh: boolean) => {
    const isNewest = ticket();
    grid.setAttribute("aria-busy", "true");
    more.disabled = true;
    try {
      const page = await ctx.api.list(dir, fresh ? null : cursor);
      if (!isNewest()) return;
      if (fresh) entries.length = 0;
      entries.push(...page.entries);
      cursor = page.cursor;
      render();
    } finally {
      if (isNewest()) {
        grid.setAttribute("aria-busy", "false");
        more.disabled = false;
      }
    }
  };
  // In place, so the preview or history shown and the status line (with its Undo) stay.
  const reload = () => {
    if (ctx.can("list")) void attempt(() => load(true));
    ctx.refresh();
  };
  more.addEventListener("click", () => void attempt(() => load(false)));

  const upload = async (files: File[]) => {
    const replaced: Version[] = [];
    let sent = 0;
    for (const file of files) {
      const path = join(dir, file.name);
      const { row: line, progress } = progressRow(file);
      uploads.append(line);
      // Whether it replaced a file is the vault's answer (200, not 201), not the listing shown, which may be a reload behind.
      let replacedOne = false;
      const done = await attempt(async () => {
        replacedOne = await uploadFile(ctx.api.fileUrl(path), file, progress, ctx.api.bound, ctx.api.prove);
      });
      line.remove();
      if (!done) break;
      sent++;
      const before = replacedOne ? await versionBefore(ctx, path) : null;
      if (before) replaced.push(before);
    }
    if (sent > 0) {
      const names = files
        .slice(0, sent)
        .map((f) => f.name)
        .join(", ");
      const undo = replaced.length > 0 && canRestore(ctx) ? restoreAll(ctx, replaced, reload) : undefined;
      if (sent === files.length)
        say(replaced.length > 0 ? `Uploaded ${names}, replacing what was there.` : `Uploaded ${names}`, "ok", undo);
      reload();
    }
  };

  const list = ctx.can("list")
    ? grid
    : ctx.can("write")
      ? h(
          "p",
          { className: "dropbox" },
          `Drop files here to upload them to ${dir === "" ? "this cap's root" : `${dir}/`}. `,
          "This cap cannot list folders, so what is already here is not shown.",
        )
      : h("p", {}, "This cap cannot list folders.");
  const zone = h("div", { className: ctx.can("list") ? "zone" : "zone drop-only" }, list, more);
  if (ctx.can("write")) dropZone(zone, (files) => void upload(files));
  if (ctx.can("list")) void attempt(() => load(true));
  body.append(zone, pane);
  return h(
    "section",
    { className: "files" },
    breadcrumbs(dir, open),
    toolbar(ctx, dir, open, upload, (path) => showInPane(historyPanel(ctx, path, reload))),
    uploads,
    body,
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

function toolbar(
  ctx: Ctx,
  dir: string,
  open: (dir: string) => void,
  upload: (files: File[]) => void,
  history: (path: string) => void,
): HTMLElement {
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
      // Made in storage first: the folder stays while empty, for this page, a reload and every other client.
      void attempt(async () => {
        await ctx.api.makeFolder(path);
        open(path);
      });
    });
    bar.append(
      h("label", { for: "upload-input", className: "button", tabindex: 0, onkeydown: clickOnEnter }, "Upload files"),
      input,
      form,
    );
    bar.append(
      h(
        "span",
        { className: "hint" },
        ctx.can("list") ? "or drop files on the list" : "or drop files in the box below",
      ),
    );
  }
  if (ctx.can("read")) {
    // A deleted file is in no listing; its history is still kept.
    const name = h("input", {
      type: "text",
      name: "history-path",
      placeholder: "a deleted file's name",
      "aria-label": "Path of a file whose history to show",
      required: true,
    });
    const form = h("form", { className: "inline" }, name, h("button", { type: "submit" }, "History"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const path = name.value.replace(/^\/+|\/+$/g, "");
      history(path.includes("/") ? path : join(dir, path));
    });
    bar.append(form);
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
  showInPane: (content: HTMLElement) => void,
): HTMLElement {
  const path = join(dir, e.name);
  const isDir = e.type === "dir";
  const show = async () => {
    showInPane(h("p", {}, "Loading preview…"));
    try {
      showInPane(await preview(ctx.api, path, e.size ?? 0));
    } catch (err) {
      showInPane(h("p", {}));
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
      h("button", { type: "button", onclick: () => showInPane(historyPanel(ctx, path, reload)) }, "History"),
    );
  }
  if (!isDir && ctx.can("write") && ctx.can("delete")) {
    const rename = async () => {
      const to = prompt(`Move or rename "${path}" to (a path from the root):`, path);
      if (!to || to === path) return;
      if (await attempt(() => ctx.api.move(path, to))) {
        // Moved back: the move left nothing at `path`, and any file at `to` it would have replaced was refused.
        say(`Moved ${path} to ${to}`, "ok", {
          label: "Undo",
          run: async () => {
            await ctx.api.move(to, path);
            say(`Moved ${to} back to ${path}`);
            reload();
          },
        });
        reload();
      }
    };
    actions.append(h("button", { type: "button", onclick: () => void rename() }, "Rename"));
  }
  if (isDir && ctx.can("delete")) {
    // Only an empty folder goes: the vault refuses one that holds anything, and its message is shown as it is.
    const removeFolder = async () => {
      if (await attempt(() => ctx.api.removeFolder(path))) {
        const undo = ctx.can("write")
          ? {
              label: "Undo",
              run: async () => {
                await ctx.api.makeFolder(path);
                say(`Made ${path}/ again`);
                reload();
              },
            }
          : undefined;
        say(`Removed the empty folder ${path}/`, "ok", undo);
        reload();
      }
    };
    actions.append(
      h("button", { type: "button", className: "danger", onclick: () => void removeFolder() }, "Remove folder"),
    );
  }
  if (!isDir && ctx.can("delete")) {
    const remove = async () => {
      const after = canRestore(ctx)
        ? "Undo right after, or restore it from History later."
        : "a cap with read and write can restore it.";
      if (!confirm(`Delete "${path}"? Its history keeps it: ${after}`)) return;
      if (await attempt(() => ctx.api.remove(path))) {
        const gone = canRestore(ctx) ? await ownLatest(ctx, path, "deleted") : null;
        say(`Deleted ${path}`, "ok", gone ? restoreAll(ctx, [gone], reload) : undefined);
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

const canRestore = (ctx: Ctx) => ctx.can("read") && ctx.can("write");

/** The newest version of `path` if this cap just made it as `operation`; null if another change came first. */
async function ownLatest(ctx: Ctx, path: string, operation: Version["operation"]): Promise<Version | null> {
  try {
    const [latest] = (await ctx.api.versions(path, null, 1)).versions;
    return latest && latest.actor === ctx.info.id && latest.operation === operation && !latest.redacted ? latest : null;
  } catch {
    return null;
  }
}

/** What `path` held before this cap's write just now, when that write is still the newest version. */
async function versionBefore(ctx: Ctx, path: string): Promise<Version | null> {
  if (!ctx.can("read")) return null;
  try {
    const [latest, before] = (await ctx.api.versions(path, null, 2)).versions;
    const mine = latest?.actor === ctx.info.id && latest.operation === "modified";
    return mine && before && !before.redacted ? before : null;
  } catch {
    return null;
  }
}

/** Undo through the versions API: each version restored, as a new version, so the undo is in the history too. */
function restoreAll(ctx: Ctx, versions: Version[], reload: () => void): StatusAction {
  return {
    label: "Undo",
    run: async () => {
      try {
        for (const v of versions) await ctx.api.restore(v.id);
      } finally {
        reload();
      }
      say(versions.length === 1 ? "Undone: the earlier version is back." : "Undone: the earlier versions are back.");
    },
  };
}
