import { ApiError } from "./api.ts";
import { byId, fill, h } from "./dom.ts";

/** A button offered beside a message, such as Undo right after a delete. */
export interface StatusAction {
  label: string;
  run: () => Promise<unknown>;
}

/** Shows what happened in the status line; a refusal shows the vault's own message, nothing rephrased. */
export function say(text: string, kind: "ok" | "error" = "ok", action?: StatusAction): void {
  const status = byId("status");
  status.className = kind;
  status.setAttribute("role", kind === "error" ? "alert" : "status");
  fill(status, text);
  if (action) {
    const button = h("button", { type: "button", className: "undo" }, action.label);
    button.addEventListener("click", () => {
      (button as HTMLButtonElement).disabled = true;
      void attempt(action.run);
    });
    status.append(" ", button);
  }
}

/**
 * Reports a failed action. `no_such_cap` means the cap died (revoked or
 * expired while the page was open): the whole console turns into the one
 * page every dead, unknown or forged cap gets.
 */
export function report(err: unknown): void {
  if (err instanceof ApiError && err.code === "no_such_cap") showGone();
  else if (err instanceof ApiError) say(`Refused: ${err.message} (${err.code})`, "error");
  else say(`Failed: ${err instanceof Error ? err.message : String(err)}`, "error");
}

/** Runs an action, reporting its failure; returns whether it succeeded. */
export async function attempt(action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (err) {
    report(err);
    return false;
  }
}

/** The same page for a revoked, an expired and an unknown cap: the vault answers all three alike, and so does this. */
export function showGone(): void {
  fill(byId("cap-header"));
  fill(byId("tabs"));
  fill(byId("status"));
  document.title = "capvault: no such capability";
  fill(
    byId("view"),
    h(
      "section",
      { className: "gone" },
      h("h1", {}, "This capability is not available"),
      h("p", {}, "It was revoked, it has expired, or it never existed. Ask whoever gave it to you for a new one."),
      h("p", {}, h("a", { href: "/ui", className: "button" }, "Open another cap")),
    ),
  );
}
