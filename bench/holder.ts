import { HolderKey } from "../clients/typescript/holder.ts";
import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { leanOk } from "./lean-http.ts";
import { groupCpuMs } from "./proc-stats.ts";
import { median, sequential } from "./stats.ts";

/**
 * A holder-bound read (issue 20) vs an unbound one, same file: what the DPoP
 * check costs the vault (verify, the object's jti admission). Proofs are
 * signed before each batch, outside the timed calls: the row is the vault's
 * cost, not the client's signing. Both run in one interleaved run (A B, B A,
 * ...); the vault's CPU per read is measured too, as a loaded machine
 * inflates wall time but not CPU.
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
  // The unbound side is a child too, so both reads cross one delegation.
  const plain = await mintChild(root);
  const variants = {
    bound: async () => {
      const proofs = await Promise.all(
        Array.from({ length: n }, () => key.proof({ method: "GET", url: fileUrl, token, body: null })),
      );
      return () => sequential(n, (i) => leanOk(fileUrl, { headers: { dpop: proofs[i]! } }));
    },
    unbound: async () => () => sequential(n, () => get(`${plain}/file?path=holder.txt`)),
  };
  const p50 = { bound: [] as number[], unbound: [] as number[] };
  const cpu = { bound: [] as number[], unbound: [] as number[] };
  for (let r = 0; r < ctx.size.rounds; r++) {
    const order = r % 2 === 0 ? (["bound", "unbound"] as const) : (["unbound", "bound"] as const);
    for (const k of order) {
      const run = await variants[k]();
      const c0 = await groupCpuMs(ctx.vault.pgid);
      p50[k].push(median(await run()));
      cpu[k].push(((await groupCpuMs(ctx.vault.pgid)) - c0) / n);
    }
  }
  const m = (xs: number[]) => median(xs);
  return [
    makeRow({
      section: "holder",
      row: "bound − unbound read p50",
      unit: "ms",
      cap: m(p50.bound) - m(p50.unbound),
      floorName: `unbound read ${m(p50.unbound).toFixed(2)} ms`,
      goal: { on: "cap", op: "<=", value: 0.3 },
    }),
    makeRow({
      section: "holder",
      row: "vault CPU per read, bound vs unbound",
      unit: "ms",
      cap: m(cpu.bound),
      floor: m(cpu.unbound),
      floorName: "unbound read",
    }),
  ];
}
