import type { Backend } from "../shared/wire-types.ts";
import type { CapObject } from "./cap-object.ts";
import type { ObjectEnv } from "./object-env.ts";
import type { RootJournal } from "./root-journal.ts";
import type { RootRegistry } from "./root-registry.ts";

/**
 * The one way to address the objects. A cap's object is named by its token's
 * digest (`key`), never by the token, so the runtime's object names reveal no
 * secret; the registry is a single instance.
 */
export function capObjectStub(env: Pick<ObjectEnv, "CAPS">, key: string): DurableObjectStub<CapObject> {
  return env.CAPS.get(env.CAPS.idFromName(key));
}

/**
 * The version journal of a storage root: one per backend and level 0 (the
 * admin's prefix), so every cap over that root, at any depth, shares it.
 * The name holds the prefix; object names are never shown to anyone.
 */
export function rootJournalStub(
  env: Pick<ObjectEnv, "JOURNALS">,
  backend: Backend,
  level0: string,
): DurableObjectStub<RootJournal> {
  return env.JOURNALS.get(env.JOURNALS.idFromName(`${backend}:${level0}`));
}

/** The admin's index of root caps: one per vault. */
export function rootRegistryStub(env: Pick<ObjectEnv, "ROOTS">): DurableObjectStub<RootRegistry> {
  return env.ROOTS.get(env.ROOTS.idFromName("registry"));
}
