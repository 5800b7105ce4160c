import type { CapEnv } from "./cap-env.ts";
import type { CapObject } from "./cap-object.ts";
import type { RootRegistry } from "./root-registry.ts";

/**
 * The one way to address the objects. A cap's object is named by its token's
 * digest (`key`), never by the token, so the runtime's object names reveal no
 * secret; the registry is a single instance.
 */
export function capObjectStub(env: Pick<CapEnv, "CAPS">, key: string): DurableObjectStub<CapObject> {
  return env.CAPS.get(env.CAPS.idFromName(key));
}

/** The admin's index of root caps: one per vault. */
export function rootRegistryStub(env: Pick<CapEnv, "ROOTS">): DurableObjectStub<RootRegistry> {
  return env.ROOTS.get(env.ROOTS.idFromName("registry"));
}
