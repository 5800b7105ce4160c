import type { StorageBindings } from "../storage-adapters/storage-bindings.ts";
import type { CapObject } from "./cap-object.ts";
import type { RootJournal } from "./root-journal.ts";
import type { RootRegistry } from "./root-registry.ts";

/** What the Durable Objects are given: their own namespaces, storage, and the vault's secrets and settings. */
export interface ObjectEnv extends StorageBindings {
  CAPS: DurableObjectNamespace<CapObject>;
  ROOTS: DurableObjectNamespace<RootRegistry>;
  /** One version journal per storage root (backend and level 0). */
  JOURNALS: DurableObjectNamespace<RootJournal>;
  /** Signs cap tokens (base64url, >= 32 bytes); without it no token is minted or accepted. */
  CAPVAULT_TOKEN_KEY?: string;
  CAPVAULT_MAX_FILE_BYTES?: string;
}
