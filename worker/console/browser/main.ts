import { capApi } from "./api.ts";
import { auditView } from "./audit-view.ts";
import { filesView } from "./browser.ts";
import type { Ctx } from "./context.ts";
import { byId, fill, h } from "./dom.ts";
import { renderHeader } from "./header.ts";
import { type ConsoleKey, consoleKey } from "./holder-store.ts";
import { keyPanel, showKeyButton } from "./holder-view.ts";
import { newestWins } from "./newest.ts";
import { shareView } from "./share.ts";
import { report } from "./status.ts";
import { treeView } from "./tree-view.ts";

/** The cap this page works on: in memory only, for as long as the page lives. */
let token = "";

/**
 * The console's entry. The token is read from the URL fragment, which the
 * browser never sends to the server, and kept in memory only: nothing is
 * written to localStorage, sessionStorage or cookies, and the fragment is
 * taken out of the page's history entry at once, so the token is not left
 * in the browser's history, in Back/Forward, or on screen in the address bar.
 * A reload therefore asks for the cap again.
 */
async function boot(): Promise<void> {
  const given = fragmentToken();
  if (location.hash !== "") history.replaceState(null, "", location.pathname + location.search);
  if (given !== "") token = given;
  fill(byId("status"));
  if (token === "") {
    askForCap();
    return;
  }
  let info: Ctx["info"];
  let api: Ctx["api"];
  let key: ConsoleKey | null;
  try {
    // A token whose first bit is set may name a holder-bound cap: its every request is signed by this console's key.
    key = mayBeBound(token) ? await consoleKey() : null;
    api = capApi(token, key);
    info = await api.info();
  } catch (err) {
    report(err);
    return;
  }
  const ownJkt = key?.jkt ?? null;
  renderHeader(info, ownJkt);
  // Refreshes overlap (one per write): an older one answered last must not show older usage.
  const ticket = newestWins();
  const ctx: Ctx = {
    api,
    info,
    can: (r) => info.rights.includes(r),
    share: (path) => show("share", path),
    refresh: () => {
      const isNewest = ticket();
      api.info().then((fresh) => {
        if (!isNewest()) return;
        ctx.info = fresh;
        renderHeader(fresh, ownJkt);
      }, report);
    },
  };
  const tabs: [string, string, boolean][] = [
    ["files", "Files", ctx.can("list") || ctx.can("read") || ctx.can("write")],
    ["share", "Share", ctx.can("subdir")],
    ["delegation", "Delegation", ctx.can("subdir")],
    ["audit", "Audit", true],
    ["key", "Key", true],
  ];
  const buttons = tabs
    .filter(([, , shown]) => shown)
    .map(([id, text]) =>
      h("button", { type: "button", role: "tab", id: `tab-${id}`, onclick: () => show(id, "") }, text),
    );
  fill(byId("tabs"), h("div", { role: "tablist" }, ...buttons));
  function show(tab: string, path: string): void {
    for (const b of buttons) b.setAttribute("aria-selected", String(b.id === `tab-${tab}`));
    fill(byId("status"));
    const view = byId("view");
    let shown: string | null = null;
    const open = (dir: string) => {
      // What the status line said was about the folder left behind.
      if (shown !== null && dir !== shown) fill(byId("status"));
      shown = dir;
      fill(view, filesView(ctx, dir, open));
    };
    if (tab === "files") open(path);
    else if (tab === "share") fill(view, shareView(ctx, path));
    else if (tab === "delegation") fill(view, treeView(ctx));
    else if (tab === "key") fill(view, keyPanel());
    else fill(view, auditView(ctx));
  }
  show(buttons[0]?.id.slice(4) ?? "audit", "");
}

/** The token in the fragment; a fragment that is not valid percent-encoding names no cap (and gets the page for unknown caps). */
function fragmentToken(): string {
  let raw: string;
  try {
    raw = decodeURIComponent(location.hash.slice(1));
  } catch {
    raw = location.hash.slice(1);
  }
  // A token is base32 (URL-safe characters only). Anything else (`..` above all, which the
  // browser would resolve out of /object/ into another route) is asked about
  // as a name no cap has, so it gets the one page every unknown cap gets.
  return raw === "" || /^[A-Za-z0-9_-]+$/.test(raw) ? raw : "not-a-cap";
}

/**
 * No cap in the fragment: ask for one, and keep it in memory only. Not put in
 * the fragment: the browser records every URL it shows in its history, and
 * this way the token never is one (a link with `#<token>` is recorded as it
 * is opened, before this script can run).
 */
function askForCap(): void {
  fill(byId("cap-header"), h("h1", {}, "capvault console"));
  fill(byId("tabs"));
  const input = h("input", { type: "password", id: "cap-input", autocomplete: "off", required: true });
  const form = h(
    "form",
    { className: "open-cap" },
    h("label", { for: "cap-input" }, "Cap URL or token"),
    input,
    h("button", { type: "submit" }, "Open"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const value = input.value.trim();
    const given = value.includes("/object/") ? (value.split("/object/")[1]?.split(/[/?#]/)[0] ?? "") : value;
    // Checked as a fragment is: anything but a token is asked about as a name no cap has.
    token = given === "" || /^[A-Za-z0-9_-]+$/.test(given) ? given : "not-a-cap";
    void boot();
  });
  const key = h("div", { className: "key-place" });
  fill(key, showKeyButton(key));
  fill(byId("view"), form, key);
}

window.addEventListener("hashchange", () => void boot());
void boot();

/**
 * False only for a token that cannot name a holder-bound cap (first bit clear:
 * base32 "a" to "p"), as shared/token.ts's mayBeBound says; that module is not
 * imported here because it would bring the vault's refusal table into the page.
 */
function mayBeBound(token: string): boolean {
  const first = token.charCodeAt(0);
  return !(first >= 0x61 && first <= 0x70);
}
