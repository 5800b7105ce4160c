import { AUDITED_REFUSALS } from "../durable-objects/cap-audit.ts";
import { checkKey } from "../durable-objects/path-check.ts";
import { refuse } from "../shared/refusals.ts";
import type { Result } from "../shared/result.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { ReadOutcome, StorageReadOptions } from "../storage-adapters/storage-adapter.ts";
import type { CapStub } from "./cap-stub.ts";
import type { Env } from "./env.ts";

/**
 * A file read through a cap: the cap's object decides (alive, right, path)
 * and grants this one read; the worker then reads storage itself, so the
 * bytes never cross the object as a stream over RPC. A refusal storage
 * finds (a link leading out of the root, on disk) is audited by the object,
 * as when it performed the read itself.
 */
export async function readThroughCap(
  cap: CapStub,
  env: Env,
  rawPath: string | null,
  options: StorageReadOptions,
): Promise<Result<ReadOutcome>> {
  const grant = await cap.grantRead(rawPath);
  if (!grant.ok) return grant;
  const storage = selectStorage(env, grant.value.backend);
  if (!storage) return refuse("backendMissing");
  const at = checkKey(grant.value.root, grant.value.path, "file");
  if (!at.ok) return at;
  const read = await storage.read(at.value, options);
  if (!read.ok && AUDITED_REFUSALS.has(read.error.code)) await cap.auditReadRefusal(rawPath, read.error);
  return read;
}
