import type { HolderJwk } from "../../../shared/holder-key.ts";
import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { expiry } from "./format.ts";
import { consoleKey } from "./holder-store.ts";
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
  const holder = holderChoice(ctx);
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
    holder.fieldset,
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
      const bound = await holder.chosen();
      const minted = await ctx.api.share({
        path: pathInput.value.replace(/^\/+|\/+$/g, ""),
        rights: chosen,
        ttlSeconds,
        label: label.value.trim() || null,
        history: history.checked ? "all" : null,
        holder: bound?.jwk ?? null,
      });
      fill(result, mintedCap(minted, bound?.own ?? false, bound !== null));
      say(
        bound
          ? "Cap created, bound to its holder: the URL opens nothing without that key."
          : "Cap created. Hand it over through a private channel: whoever holds the URL holds the rights.",
      );
    });
  });
  return h("section", { className: "share-view" }, h("h2", {}, "Share"), form, result);
}

/**
 * Who the child is for. Under a bound cap binding never loosens (the vault
 * refuses a bearer child), so the choices are this console's key, the
 * default, or a named holder's pasted public JWK; an unbound cap also offers
 * a bearer URL, its default.
 */
function holderChoice(ctx: Ctx): {
  fieldset: HTMLElement;
  chosen: () => Promise<{ jwk: HolderJwk; own: boolean } | null>;
} {
  const parentBound = ctx.api.bound;
  const radio = (value: string, checked: boolean) =>
    h("input", { type: "radio", name: "share-holder", value, id: `share-holder-${value}`, checked });
  const bearer = parentBound ? null : radio("bearer", true);
  const own = radio("console", parentBound);
  const named = radio("named", false);
  const pasted = h("textarea", {
    id: "share-holder-jwk",
    name: "holder-jwk",
    rows: 3,
    placeholder: '{"kty":"OKP","crv":"Ed25519","x":"…"}',
    "aria-label": "The holder's public key (JWK)",
    spellcheck: "false",
    hidden: true,
  });
  for (const r of [bearer, own, named]) r?.addEventListener("change", () => (pasted.hidden = !named.checked));
  const fieldset = h(
    "fieldset",
    { className: "holder-choice" },
    h("legend", {}, "Holder"),
    bearer ? h("label", { className: "check" }, bearer, " anyone with the URL (a bearer cap)") : null,
    h("label", { className: "check" }, own, " bound to this console's key (opens only in this browser)"),
    h("label", { className: "check" }, named, " bound to a named holder's public key:"),
    pasted,
  );
  const chosen = async () => {
    if (own.checked) return { jwk: (await consoleKey()).jwk, own: true };
    if (!named.checked) return null;
    try {
      // The vault checks the key itself (public, Ed25519 or P-256) and says what is wrong with it.
      return { jwk: JSON.parse(pasted.value) as HolderJwk, own: false };
    } catch {
      throw new Error("the holder's key must be a public JWK in JSON");
    }
  };
  return { fieldset, chosen };
}

function mintedCap(minted: MintedCap, ownKey: boolean, bound: boolean): HTMLElement {
  const origin = new URL(minted.url).origin;
  const consoleLink = `${origin}/ui#${minted.token}`;
  const mcp = `${minted.url}/mcp`;
  const config = JSON.stringify({ mcpServers: { capvault: { type: "http", url: mcp } } }, null, 2);
  // A bound cap's MCP endpoint needs a client that signs each request (capvault mcp --key-file), not a plain config.
  return h(
    "div",
    { className: "minted" },
    h("p", {}, `New cap ${minted.id}: ${minted.rights.join(", ")}; ${expiry(minted.expiresAt)}.`),
    bound
      ? h(
          "p",
          { className: "note", id: "minted-bound" },
          ownKey
            ? "Bound to this console's key: it opens only in this browser's console."
            : "Bound to the named holder's key: it opens only where that key signs (their console, or capvault with their key file).",
        )
      : null,
    copyable("Cap URL", minted.url, "minted-url"),
    copyable("Console link", consoleLink, "minted-console"),
    h("p", {}, h("a", { href: consoleLink, target: "_blank", rel: "noopener noreferrer" }, "Open its console")),
    copyable("MCP endpoint", mcp, "minted-mcp"),
    ...(bound
      ? []
      : [
          h("p", {}, "MCP client config:"),
          h("pre", { className: "config", id: "minted-config" }, config),
          copyButton(config, "Copy config"),
        ]),
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

export function copyButton(value: string, text: string): HTMLElement {
  const button = h("button", { type: "button" }, text);
  button.addEventListener("click", () => {
    navigator.clipboard.writeText(value).then(
      () => say("Copied."),
      () => say("Copying was not allowed here; select the text and copy it.", "error"),
    );
  });
  return button;
}
