import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { expiry } from "./format.ts";
import { attempt, say } from "./status.ts";
import type { MintedCap } from "./wire.ts";

const TTLS: [string, string][] = [
  ["3600", "1 hour"],
  ["86400", "1 day"],
  ["604800", "7 days"],
  ["2592000", "30 days"],
  ["none", "no expiry (never later than this cap)"],
  ["custom", "custom…"],
];

const DEFAULT_RIGHTS: readonly string[] = ["read", "list"];
const DEFAULT_TTL = "86400";

/**
 * Mints a narrower child cap: a sub-path, a subset of this cap's own rights
 * (no other right is offered; read and list are ticked at first), a
 * lifetime (a day at first) and a label. The vault checks all
 * of it again; this form only keeps the choices honest.
 */
export function shareView(ctx: Ctx, path: string): HTMLElement {
  const pathInput = h("input", {
    type: "text",
    id: "share-path",
    name: "path",
    value: path,
    placeholder: "(the whole cap)",
  });
  // Safe by default: read and list for a day; anything more is ticked on purpose.
  const rights = ctx.info.rights.map((r) => ({
    right: r,
    box: h("input", { type: "checkbox", name: "rights", value: r, checked: DEFAULT_RIGHTS.includes(r) }),
  }));
  const ttl = h(
    "select",
    { id: "share-ttl", name: "ttl" },
    ...TTLS.map(([v, t]) => h("option", { value: v, selected: v === DEFAULT_TTL }, t)),
  );
  const customAmount = h("input", { type: "number", min: 1, value: 2, "aria-label": "Custom lifetime", hidden: true });
  const customUnit = h(
    "select",
    { "aria-label": "Custom lifetime unit", hidden: true },
    h("option", { value: "60" }, "minutes"),
    h("option", { value: "3600", selected: true }, "hours"),
    h("option", { value: "86400" }, "days"),
  );
  ttl.addEventListener("change", () => {
    customAmount.hidden = customUnit.hidden = ttl.value !== "custom";
  });
  // A label by default, so the delegation tree never fills with unnamed caps.
  const label = h("input", {
    type: "text",
    id: "share-label",
    name: "label",
    maxlength: 200,
    value: `shared ${path === "" ? "root" : `${path}/`} ${new Date().toISOString().slice(0, 10)}`,
  });
  const history = h("input", { type: "checkbox", id: "share-history", name: "history" });
  const result = h("div", { className: "share-result", "aria-live": "polite" });
  const form = h(
    "form",
    { className: "share" },
    h("label", { for: "share-path" }, "Folder (from this cap's root)"),
    pathInput,
    h(
      "fieldset",
      {},
      h("legend", {}, "Rights"),
      ...rights.map(({ right, box }) => h("label", { className: "check" }, box, ` ${right}`)),
    ),
    h("label", { for: "share-ttl" }, "Lifetime"),
    h("div", { className: "inline" }, ttl, customAmount, customUnit),
    h("label", { for: "share-label" }, "Label (who is it for?)"),
    label,
    h(
      "label",
      { className: "check" },
      history,
      " Also let it see the history written before now (without this, only versions from its mint on)",
    ),
    h("button", { type: "submit" }, "Create cap"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const ttlSeconds =
      ttl.value === "none"
        ? null
        : ttl.value === "custom"
          ? Number(customAmount.value) * Number(customUnit.value)
          : Number(ttl.value);
    const chosen = rights.filter((r) => r.box.checked).map((r) => r.right);
    void attempt(async () => {
      const minted = await ctx.api.share({
        path: pathInput.value.replace(/^\/+|\/+$/g, ""),
        rights: chosen,
        ttlSeconds,
        label: label.value.trim() || null,
        history: history.checked ? "all" : null,
      });
      fill(result, mintedCap(minted));
      say("Cap created. Hand it over through a private channel: whoever holds the URL holds the rights.");
    });
  });
  return h("section", { className: "share-view" }, h("h2", {}, "Share"), form, result);
}

function mintedCap(minted: MintedCap): HTMLElement {
  const origin = new URL(minted.url).origin;
  const consoleLink = `${origin}/ui#${minted.token}`;
  const mcp = `${minted.url}/mcp`;
  const config = JSON.stringify({ mcpServers: { capvault: { type: "http", url: mcp } } }, null, 2);
  return h(
    "div",
    { className: "minted" },
    h("p", {}, `New cap ${minted.id}: ${minted.rights.join(", ")}; ${expiry(minted.expiresAt)}.`),
    copyable("Cap URL", minted.url, "minted-url"),
    copyable("Console link", consoleLink, "minted-console"),
    h("p", {}, h("a", { href: consoleLink, target: "_blank", rel: "noopener noreferrer" }, "Open its console")),
    copyable("MCP endpoint", mcp, "minted-mcp"),
    h("p", {}, "MCP client config:"),
    h("pre", { className: "config", id: "minted-config" }, config),
    copyButton(config, "Copy config"),
  );
}

function copyable(title: string, value: string, id: string): HTMLElement {
  const input = h("input", { type: "text", readonly: true, value, id, className: "secret" });
  return h(
    "div",
    { className: "copyable" },
    h("label", { for: id }, title),
    h("div", { className: "inline" }, input, copyButton(value, "Copy")),
  );
}

function copyButton(value: string, text: string): HTMLElement {
  const button = h("button", { type: "button" }, text);
  button.addEventListener("click", () => {
    navigator.clipboard.writeText(value).then(
      () => say("Copied."),
      () => say("Copying was not allowed here; select the text and copy it.", "error"),
    );
  });
  return button;
}
