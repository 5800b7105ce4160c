/**
 * The reference model's version history of one storage root (README.md,
 * "Versions and undo"), for test/model/vault-model.ts. It is written from
 * the contract, not from durable-objects/version-journal.ts: a write records
 * `created` or `modified` with new bytes; a delete records `deleted` and a
 * move `moved` at its source, pointing at the bytes they took away; a move
 * records `created` or `modified` at its destination, pointing at the same
 * bytes. Bytes are shared, never copied, so redacting any version that
 * points at them destroys them (and their hash) for all of them.
 *
 * Paths are relative to the root's level 0, as every cap over the root
 * shares ids: a cap sees a version only if its path lies inside its scope
 * (its root below level 0); any other id, malformed ones included, is
 * answered exactly as one that does not exist. So is a version older than
 * the cap's history floor (`from`): a child sees only what followed its mint,
 * unless minted with `history: "all"`, and never below its parent's floor.
 */
import type { VersionOperation } from "../../shared/wire-types.ts";

/** One kept set of bytes; `redacted` once destroyed (every version pointing at it loses them). */
export interface ModelBlob {
  bytes: Uint8Array;
  redacted: boolean;
}

/** What a version says about the bytes it points at. */
export interface ModelContent {
  size: number;
  sha256: string;
  contentType: string;
  blob: ModelBlob;
}

export interface ModelVersion extends ModelContent {
  id: number;
  path: string;
  op: VersionOperation;
  /** The role of the cap that did it. */
  actor: number;
}

/** The largest id a request can name: ids are decimal, positive, without leading zeros, and safe integers. */
export function parseVersionId(raw: string): number | null {
  return /^[1-9]\d*$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

export class ModelJournal {
  /** Oldest first; ids only ever grow and are never reused, also after pruning. */
  private rows: ModelVersion[] = [];
  private lastId = 0;
  private readonly touched = new Set<string>();

  /** @param keepVersions the root's retention: the newest this many versions of each path are kept. */
  constructor(private readonly keepVersions: number) {}

  /** The newest id allocated so far (0 before any). */
  get newestId(): number {
    return this.lastId;
  }

  /** Every path that ever had a version, in first-seen order (for a final sweep). */
  get paths(): string[] {
    return [...this.touched];
  }

  write(path: string, created: boolean, content: ModelContent, actor: number): void {
    this.add(path, created ? "created" : "modified", content, actor);
    this.prune(path);
  }

  remove(path: string, content: ModelContent, actor: number): void {
    this.add(path, "deleted", content, actor);
    this.prune(path);
  }

  move(from: string, to: string, content: ModelContent, replaced: boolean, actor: number): void {
    this.add(from, "moved", content, actor);
    this.add(to, replaced ? "modified" : "created", content, actor);
    this.prune(to);
    this.prune(from);
  }

  /** Whether any version still points at `blob` (retention drops a version's hold on its bytes). */
  holds(blob: ModelBlob): boolean {
    return this.rows.some((row) => row.blob === blob);
  }

  /** Up to `limit` versions of `path` older than id `before` and not older than `from`, newest first. */
  history(path: string, before: number | null, limit: number, from = 0): ModelVersion[] {
    const older = this.rows.filter(
      (row) => row.path === path && row.id >= from && (before === null || row.id < before),
    );
    return older.reverse().slice(0, limit);
  }

  /** The version a cap of this `scope` names by `rawId`, or null: unknown, malformed and out of scope alike. */
  find(rawId: string, scope: string, from = 0): ModelVersion | null {
    const id = parseVersionId(rawId);
    const row = id === null || id < from ? undefined : this.rows.find((r) => r.id === id);
    return row?.path.startsWith(scope) && row.path.length > scope.length ? row : null;
  }

  /** The ids a cap of this `scope` can name, newest first. */
  idsIn(scope: string, from = 0): number[] {
    return this.rows
      .filter((row) => row.id >= from && row.path.startsWith(scope) && row.path.length > scope.length)
      .map((row) => row.id)
      .reverse();
  }

  /** Whether a version older than `from` points at `blob`: redacting it would reach below that floor. */
  heldBefore(blob: ModelBlob, from: number): boolean {
    return this.rows.some((row) => row.blob === blob && row.id < from);
  }

  private add(path: string, op: VersionOperation, content: ModelContent, actor: number): void {
    this.rows.push({ ...content, id: ++this.lastId, path, op, actor });
    this.touched.add(path);
  }

  /** Retention applies per path on each of its changes; a pruned version's id is simply gone. */
  private prune(path: string): void {
    const ofPath = this.rows.filter((row) => row.path === path);
    const dropped = new Set(ofPath.slice(0, Math.max(0, ofPath.length - this.keepVersions)));
    if (dropped.size > 0) this.rows = this.rows.filter((row) => !dropped.has(row));
  }
}
