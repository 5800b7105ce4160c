import type { Row } from "./bench-row.ts";

function figure(n: number | null): string {
  if (n === null) return "—";
  if (!Number.isFinite(n)) return String(n);
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** The bench table as Markdown: row, cap, floor (or peer), ratio, target, met. */
export function formatTable(rows: readonly Row[]): string {
  const lines = [
    "| row | unit | cap | floor / peer | ratio | target | met |",
    "| --- | --- | ---: | ---: | ---: | --- | --- |",
  ];
  for (const r of rows) {
    const floor = r.floor === null ? "—" : `${figure(r.floor)} (${r.floorName})`;
    const ratio = r.ratio === null ? "—" : `${r.ratio.toFixed(2)}×`;
    const met = r.met === null ? "—" : r.met ? "yes" : "**no**";
    lines.push(`| ${r.row} | ${r.unit} | ${figure(r.cap)} | ${floor} | ${ratio} | ${r.target ?? "—"} | ${met} |`);
  }
  return lines.join("\n");
}
