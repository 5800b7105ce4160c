import { refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { readWhole } from "../../storage-adapters/whole-body.ts";
import { readThroughCap } from "../cap-read.ts";
import type { CapStub } from "../cap-stub.ts";
import type { Env } from "../env.ts";
import type { RpcSessionBudget } from "./rpc-session-budget.ts";

/**
 * A whole file read through the cap, as `GET /file` reads it (the object
 * grants, the worker reads storage), held in memory for the RPC answer: so
 * its size is counted against the session's bounds before a byte is read.
 */
export async function readBytes(
  cap: CapStub,
  env: Env,
  path: string | null,
  budget: RpcSessionBudget,
): Promise<Result<Uint8Array>> {
  const read = await readThroughCap(cap, env, path, {});
  if (!read.ok) return read;
  // Without a range or a condition, storage answers with the body.
  if (read.value.status !== "body") return refuse("unavailable");
  const { body, meta } = read.value;
  const spent = budget.spendRead(meta.size);
  if (!spent.ok) {
    await body.cancel().catch(() => undefined);
    return spent;
  }
  const bytes = await readWhole(body, meta.size);
  // A body that is not its stated size changed under the read.
  return bytes ? ok(bytes) : refuse("keptChanging");
}
