import type { ObjectEnv } from "./object-env.ts";

/** What a cap's modules share of its Durable Object: its storage and its env. */
export interface CapHost {
  readonly storage: DurableObjectStorage;
  readonly env: ObjectEnv;
}

/** The env is read through on every use, never copied at construction, so every module sees the object's own. */
export function capHost(storage: DurableObjectStorage, envOf: () => ObjectEnv): CapHost {
  return {
    storage,
    get env() {
      return envOf();
    },
  };
}
