/** One line of the bench table: the vault's figure beside its floor's (or peer's), and the goal. */
export interface Row {
  section: string;
  row: string;
  /** ms, ops/s, MiB/s, MiB or ×. */
  unit: string;
  cap: number;
  /** What the same work costs without the vault: a floor, a peer, or the vault's own baseline. */
  floor: number | null;
  floorName: string | null;
  /** cap ÷ floor. */
  ratio: number | null;
  /** e.g. "ratio ≤ 1.15" or "cap ≥ 100"; null when the row is for information. */
  target: string | null;
  met: boolean | null;
}

export interface Goal {
  on: "ratio" | "cap";
  op: "<=" | ">=";
  value: number;
  /** Shown beside the goal; `met` is judged on `value` only. */
  stretch?: number;
}

interface RowSpec {
  section: string;
  row: string;
  unit: string;
  cap: number;
  floor?: number | null;
  floorName?: string | null;
  goal?: Goal | null;
}

/** Builds a row, computing the ratio and whether the goal is met. */
export function makeRow(spec: RowSpec): Row {
  const floor = spec.floor ?? null;
  const ratio = floor === null || floor === 0 ? null : spec.cap / floor;
  const goal = spec.goal ?? null;
  let met: boolean | null = null;
  let target: string | null = null;
  if (goal) {
    const subject = goal.on === "ratio" ? ratio : spec.cap;
    met = subject === null ? null : goal.op === "<=" ? subject <= goal.value : subject >= goal.value;
    const sign = goal.op === "<=" ? "≤" : "≥";
    const what = goal.on === "ratio" ? `${sign} ${goal.value}×` : `${sign} ${goal.value} ${spec.unit}`;
    target = goal.stretch === undefined ? what : `${what} (stretch ${goal.stretch}×)`;
  }
  return {
    section: spec.section,
    row: spec.row,
    unit: spec.unit,
    cap: spec.cap,
    floor,
    floorName: spec.floorName ?? null,
    ratio,
    target,
    met,
  };
}
