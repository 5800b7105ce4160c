import type { CapApi } from "./api.ts";
import type { CapInfo, Right } from "./wire.ts";

/** What every view of one cap's console shares. */
export interface Ctx {
  api: CapApi;
  info: CapInfo;
  can: (right: Right) => boolean;
  /** Opens the share view with a path filled in. */
  share: (path: string) => void;
  /** Reads the cap's info again (usage changes with every write) and redraws the header. */
  refresh: () => void;
}
