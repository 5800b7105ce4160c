import type { Ctx } from "./context.ts";
import { fill, h } from "./dom.ts";
import { when } from "./format.ts";
import { attempt } from "./status.ts";

/** The cap's audit trail, newest first as the vault keeps it; refused attempts stand out. */
export function auditView(ctx: Ctx): HTMLElement {
  const body = h("tbody", {}, h("tr", {}, h("td", { colspan: 5 }, "Loading…")));
  void attempt(async () => {
    const { entries } = await ctx.api.audit();
    fill(
      body,
      ...entries.map((e) =>
        h(
          "tr",
          { className: e.outcome === "ok" ? "" : "refused" },
          h("td", {}, when(e.at)),
          h("td", {}, e.op),
          h("td", {}, h("code", {}, e.path ?? "")),
          h("td", {}, e.outcome === "ok" ? "ok" : h("span", { className: "badge refused" }, `refused: ${e.outcome}`)),
          h("td", {}, e.count > 1 ? `×${e.count}` : ""),
        ),
      ),
    );
    if (entries.length === 0) fill(body, h("tr", {}, h("td", { colspan: 5 }, "Nothing recorded yet.")));
  });
  return h(
    "section",
    { className: "audit-view" },
    h("h2", {}, "Audit"),
    h(
      "table",
      { className: "audit" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "When"),
          h("th", {}, "Operation"),
          h("th", {}, "Path"),
          h("th", {}, "Outcome"),
          h("th", {}, "Times"),
        ),
      ),
      body,
    ),
  );
}
