import { HolderKey } from "../clients/typescript/holder.ts";
import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { leanOk } from "./lean-http.ts";
import { interleaved, median, sequential } from "./stats.ts";

/**
 * A holder-bound read (issue 20) vs an unbound one, same file: what the DPoP
 * check costs the vault (verify, the object's jti admission). Proofs are
 * signed before each batch, outside the timed calls: the row is the vault's
 * cost, not the client's signing.
 */
export async function holder(ctx: BenchContext): Promise<Row[]> {
  const root = ctx.vault.rootCapUrl;
  await put(`${root}/file?path=holder.txt`);
  const key = await HolderKey.generate();
  const minted = await leanOk(`${root}/subdir`, {
    method: "POST",
    body: JSON.stringify({ path: "", holder: key.publicJwk }),
  });
  const { url, token } = JSON.parse(minted.body.toString("utf8")) as { url: string; token: string };
  const fileUrl = `${url}/file?path=holder.txt`;
  const n = ctx.size.sequential;
  const bound = async () => {
    const proofs = await Promise.all(
      Array.from({ length: n }, () => key.proof({ method: "GET", url: fileUrl, token, body: null })),
    );
    return median(await sequential(n, (i) => leanOk(fileUrl, { headers: { dpop: proofs[i]! } })));
  };
  // The unbound side is a child too, so both reads cross one delegation.
  const plain = await mintChild(root);
  const unbound = async () => median(await sequential(n, () => get(`${plain}/file?path=holder.txt`)));
  const t = await interleaved(ctx.size.rounds, { bound, unbound });
  return [
    makeRow({
      section: "holder",
      row: "bound − unbound read p50",
      unit: "ms",
      cap: t.bound - t.unbound,
      floorName: `unbound read ${t.unbound.toFixed(2)} ms`,
      goal: { on: "cap", op: "<=", value: 0.3 },
    }),
  ];
}
