import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { startWorkerdFloor } from "./floor-workerd.ts";
import { get } from "./http-ops.ts";
import { interleaved, median, sequential } from "./stats.ts";

/**
 * A request's cost layer by layer, all in one interleaved run: bare workerd
 * answering a constant, a Miniflare worker answering one, the vault's `GET /`
 * (its worker alone), and a cap's info (worker + the cap's object). Each row's
 * floor is the layer beneath it, so the ratios say what each layer adds.
 */
export async function entry(ctx: BenchContext): Promise<Row[]> {
  const workerd = await startWorkerdFloor();
  try {
    const urls = {
      workerd: `${workerd.url}/`,
      miniflare: `${ctx.r2Floor.url}/const`,
      vault: `${ctx.vault.url}/`,
      info: ctx.vault.rootCapUrl,
    };
    for (const url of Object.values(urls)) for (let i = 0; i < 20; i++) await get(url);
    const p50 = (url: string) => async () => median(await sequential(ctx.size.sequential * 2, () => get(url)));
    const m = await interleaved(ctx.size.rounds, {
      workerd: p50(urls.workerd),
      miniflare: p50(urls.miniflare),
      vault: p50(urls.vault),
      info: p50(urls.info),
    });
    const row = (name: string, cap: number, floor: number | null, floorName: string | null) =>
      makeRow({ section: "entry", row: name, unit: "ms", cap, floor, floorName });
    return [
      row("bare workerd serving a constant p50", m.workerd, null, null),
      row("a Miniflare worker serving a constant p50", m.miniflare, m.workerd, "bare workerd"),
      row("the vault's GET / p50", m.vault, m.miniflare, "Miniflare constant"),
      row("a cap's info (worker + the cap's object) p50", m.info, m.vault, "vault GET /"),
    ];
  } finally {
    await workerd.stop();
  }
}
