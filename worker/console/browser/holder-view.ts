import { fill, h } from "./dom.ts";
import { consoleKey } from "./holder-store.ts";
import { copyButton } from "./share.ts";
import { report } from "./status.ts";

/**
 * This console's public key, to hand to whoever shares a cap bound to it
 * (a parent's Share "to a named holder", `capvault share --to`, the SDK's
 * `subdir({ holder })`). Made on first showing; only the public half exists
 * outside WebCrypto.
 */
export function keyPanel(): HTMLElement {
  const body = h("div", { className: "key-body" }, h("p", {}, "Loading…"));
  void consoleKey().then(({ jwk, jkt }) => {
    const text = JSON.stringify(jwk);
    fill(
      body,
      h("dl", { className: "facts" }, h("dt", {}, "thumbprint"), h("dd", {}, h("code", { id: "console-jkt" }, jkt))),
      h("label", { for: "console-jwk" }, "Public key (JWK)"),
      h(
        "div",
        { className: "inline" },
        h("textarea", { id: "console-jwk", className: "jwk", readonly: true, rows: 3, spellcheck: "false" }, text),
        copyButton(text, "Copy"),
      ),
    );
  }, report);
  return h(
    "section",
    { className: "key-view" },
    h("h2", {}, "This console's key"),
    h(
      "p",
      { className: "note" },
      "A cap shared to this key opens here and nowhere else: every request carries a fresh proof signed by it. ",
      "The private key stays in this browser (IndexedDB, not extractable); give only the public key below to whoever shares with you.",
    ),
    body,
  );
}

/** A button that shows the key panel in `where`: the key is made only when someone asks to see it. */
export function showKeyButton(where: HTMLElement): HTMLElement {
  return h(
    "button",
    { type: "button", id: "show-key", onclick: () => fill(where, keyPanel()) },
    "Show this console's key",
  );
}
