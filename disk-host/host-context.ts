import type { UploadLimits, UploadSlots } from "../storage-adapters/upload-limits.ts";
import type { KeyedLock } from "./keyed-lock.ts";
import type { MetaStore } from "./meta-store.ts";
import type { FileHandle } from "./sync-fs.ts";

/**
 * Files and folders one recursive listing page may walk. Both default to
 * the vault's own (`TREE_WALK_BUDGET`, which R2 pages use too, and
 * `FOLDER_BUDGET`), so the
 * backends page alike; only tests of the bounds themselves set smaller ones,
 * to reach them with hundreds of files rather than thousands.
 */
export interface WalkBudget {
  files: number;
  folders: number;
}

/** What every disk operation needs: the held base folder and the host's shared state. */
export interface HostContext {
  /** The base folder (`CAPVAULT_DISK_ROOT`), held open: every root resolves beneath it. */
  base: FileHandle;
  meta: MetaStore;
  /** `<base>/.capvault-versions/`, held open: kept versions, as hard links (version-store.ts). */
  versions: FileHandle;
  /** One lock per target file, so a write's precondition check and rename are one step. */
  locks: KeyedLock;
  /** Temp names of writes in progress, which the stale-temp sweep must leave alone. */
  inFlight: Set<string>;
  fileMode: number;
  dirMode: number;
  /** Time and concurrency bounds on writes (see storage-adapters/upload-limits.ts). */
  uploads: UploadLimits;
  /** What one recursive listing page may walk (tree-walk.ts). */
  walkBudget: WalkBudget;
  /** Writes in progress, against `uploads.maxConcurrent`. */
  uploadSlots: UploadSlots;
}
