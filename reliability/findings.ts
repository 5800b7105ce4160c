/**
 * What a check counts. `fivexx`, `lost` and `leaks` are the zeros the
 * project promises; `other` is every further broken property (a refusal
 * outside the contract, a success after revocation, a half-revoked cap, a
 * torn file, a hang). `drop` is a connection the vault closed without an
 * answer: shown, not failed, since the request is then re-sent. Each counted problem keeps a short detail and a replay
 * hint, so a red table always says what to rerun.
 */
export type FindingKind = "5xx" | "lost" | "leak" | "other" | "drop";

export interface Finding {
  kind: FindingKind;
  check: string;
  detail: string;
  replay: string;
}

export class Findings {
  readonly all: Finding[] = [];

  constructor(
    readonly check: string,
    private readonly replayHint: string,
  ) {}

  add(kind: FindingKind, detail: string, replay = this.replayHint): void {
    this.all.push({ kind, check: this.check, detail: detail.slice(0, 400), replay });
  }

  count(kind: FindingKind): number {
    return this.all.filter((f) => f.kind === kind).length;
  }
}
