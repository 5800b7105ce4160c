import { connect } from "../clients/typescript/rpc-cap.ts";
import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { interleaved, median, sequential } from "./stats.ts";

/**
 * Narrowing a cap and reading through the child, the delegation an agent
 * makes before handing work on: one pipelined RPC batch
 * (`subdir("skills").readText(…)`) vs `POST /subdir` then `GET /file`. Both
 * mint a real child each time, under a parent of their own (a cap holds at
 * most 1,000 live children).
 */
export async function rpc(ctx: BenchContext): Promise<Row[]> {
  const parent = await mintChild(ctx.vault.rootCapUrl, "");
  await put(`${parent}/file?path=${encodeURIComponent("rpc/skills/SKILL.md")}`);
  const viaRpc = async () => {
    const text = await connect(parent).subdir("rpc/skills").readText("SKILL.md");
    if (text.length !== 1024) throw new Error("rpc read: wrong length");
  };
  const viaHttp = async () => get(`${await mintChild(parent, "rpc/skills")}/file?path=SKILL.md`);
  const p50 = (op: () => Promise<unknown>) => async () => median(await sequential(ctx.size.sequential, op));
  const t = await interleaved(ctx.size.rounds, { rpc: p50(viaRpc), http: p50(viaHttp) });
  return [
    makeRow({
      section: "rpc",
      row: "narrow + read: RPC pipelined vs two HTTP requests",
      unit: "ms",
      cap: t.rpc,
      floor: t.http,
      floorName: "POST /subdir, GET /file",
      goal: { on: "ratio", op: "<=", value: 1 },
    }),
  ];
}
