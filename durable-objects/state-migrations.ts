import { refuse } from "../shared/refusals.ts";
import { type CapFailure, ok, type Result } from "../shared/result.ts";
import { STATE_FORMAT, type StoreKind } from "../shared/state-format.ts";
import { INTERNAL_TABLE } from "./leaf-state.ts";

/**
 * Where each Durable Object keeps its format: one row, `(store, format, at)`,
 * written in the same SQLite transaction as the migration that reached it.
 */
export const FORMAT_TABLE = "capvault_format";

/** One step of a store's migrations: it brings the store from `to - 1` (or unstamped state) to `to`. */
export interface Migration {
  to: number;
  /** What the step changes, in a few words (docs/state-format.md lists the same). */
  what: string;
  /**
   * Synchronous, so it runs inside the one transaction that also writes the
   * stamp: a kill halfway leaves the old format or the new one, never a mix.
   * Idempotent, so state that already has what a step makes (format 1 was
   * converted lazily, some objects partly) is left as it is.
   */
  up(storage: DurableObjectStorage): void;
}

/** What a wake found and did: the format before (`null`: an empty store, which has none) and after. */
export interface Wake {
  from: number | null;
  to: number | null;
}

export type WakeOptions = {
  /**
   * Stamp a store that holds nothing. Cap objects do not: a Durable Object
   * exists for every name, and every revoked or never-minted cap's object
   * wakes empty, so a stamp there would make a file of each. Their first
   * write (the mint's `init`) stamps them instead (see {@link stampFormat}).
   */
  stampEmpty: boolean;
  /** The newest format this build reads; a parameter only so the refusal of newer state can be tested. */
  build?: number;
};

/** The format this store was stamped with, or `null` when it carries none (empty, or written before formats). */
export function storedFormat(storage: DurableObjectStorage, kind: StoreKind): number | null {
  const sql = storage.sql;
  if (!tableExists(sql, FORMAT_TABLE)) return null;
  const row = sql.exec<{ format: number }>(`SELECT format FROM ${FORMAT_TABLE} WHERE store = ?`, kind).toArray()[0];
  return row ? row.format : null;
}

/** Marks the store as of `format` (this build's by default); call inside the transaction that made it so. */
export function stampFormat(storage: DurableObjectStorage, kind: StoreKind, format = STATE_FORMAT): void {
  storage.sql.exec(
    `CREATE TABLE IF NOT EXISTS ${FORMAT_TABLE} (store TEXT PRIMARY KEY, format INTEGER NOT NULL, at INTEGER NOT NULL)`,
  );
  storage.sql.exec(
    `INSERT OR REPLACE INTO ${FORMAT_TABLE} (store, format, at) VALUES (?, ?, ?)`,
    kind,
    format,
    Date.now(),
  );
}

/**
 * Brings a Durable Object's storage to this build's format before it serves
 * anything: called from its constructor, synchronously, so no request can
 * interleave (every call here is synchronous storage, and the input gate
 * stays shut). State of a newer format is refused and never written; a
 * migration that throws is rolled back whole and refused, and the next wake
 * tries again.
 *
 * Unstamped state that holds anything is format 1: format 0 stores have the
 * same shape as format 1's first ones (only their tokens differ, which the
 * worker judges before any object is addressed).
 */
export function migrateOnWake(
  storage: DurableObjectStorage,
  kind: StoreKind,
  migrations: readonly Migration[],
  options: WakeOptions,
): Result<Wake> {
  const build = options.build ?? STATE_FORMAT;
  const stamped = storedFormat(storage, kind);
  if (stamped !== null && stamped > build) return refuse("stateFormatNewer", { stored: stamped, build });
  if (stamped === build) return ok({ from: stamped, to: stamped });
  const empty = stamped === null && holdsNothing(storage);
  if (empty && !options.stampEmpty) return ok({ from: null, to: null });
  const from = stamped ?? (empty ? null : 1);
  try {
    storage.transactionSync(() => {
      for (const step of migrations) if (from === null || step.to > from) step.up(storage);
      stampFormat(storage, kind, build);
    });
  } catch {
    return refuse("stateMigrationFailed", { from: from ?? 0, to: build });
  }
  return ok({ from, to: build });
}

/** No key and no table of its own: what a fresh object, and one revocation emptied with `deleteAll()`, hold. */
function holdsNothing(storage: DurableObjectStorage): boolean {
  // Spread, not a loop left early: an unfinished list keeps its statement open, and SQLite then refuses a DROP TABLE.
  if ([...storage.kv.list({ limit: 1 })].length > 0) return false;
  const names = storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray();
  return names.every((row) => INTERNAL_TABLE.test(row.name));
}

export function tableExists(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}

/** The refusal a wake leaves its object answering every call with, or `null` when its state is current. */
export function blockedBy(wake: Result<unknown>): Refused | null {
  return wake.ok ? null : wake;
}

/** A refused Result, of any value type. */
export type Refused = { ok: false; error: CapFailure };
