import { byId, fill, h } from "./dom.ts";
import { expiry, usageText } from "./format.ts";
import type { CapInfo, Right } from "./wire.ts";

export function rightBadges(rights: readonly Right[]): HTMLElement {
  return h("span", { className: "badges" }, ...rights.map((r) => h("span", { className: `badge right-${r}` }, r)));
}

/** The cap's identity: label, id, rights, expiry, parent, holder. Never its token. `ownJkt`: this console's key's thumbprint, if it has one. */
export function renderHeader(info: CapInfo, ownJkt: string | null): void {
  const jkt = info.holder?.jkt;
  document.title = `capvault: ${info.label ?? info.id}`;
  fill(
    byId("cap-header"),
    h("h1", {}, info.label ?? (info.parent ? "unlabelled cap" : "root cap")),
    h(
      "dl",
      { className: "facts" },
      h("dt", {}, "id"),
      h("dd", {}, h("code", {}, info.id)),
      h("dt", {}, "rights"),
      h("dd", {}, rightBadges(info.rights)),
      h("dt", {}, "expiry"),
      h("dd", { className: "expiry" }, expiry(info.expiresAt)),
      h("dt", {}, "parent"),
      h("dd", {}, info.parent ? h("code", {}, info.parent) : "none (a root cap)"),
      jkt ? h("dt", {}, "holder") : null,
      jkt
        ? h(
            "dd",
            { className: "holder" },
            jkt === ownJkt ? "bound to this console's key " : "bound to the key ",
            h("code", {}, jkt),
          )
        : null,
      info.usage ? h("dt", {}, "usage") : null,
      info.usage ? h("dd", { className: "usage" }, usageText(info.usage, info.limits)) : null,
    ),
  );
}
