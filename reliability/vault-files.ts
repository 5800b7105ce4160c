import { readdir } from "node:fs/promises";
import path from "node:path";
import { call, json } from "./http-call.ts";

/** Every name under `dir` on the host (links not followed), relative to it. */
export async function hostNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    out.push(entry.name);
    if (entry.isDirectory())
      out.push(...(await hostNames(path.join(dir, entry.name))).map((f) => `${entry.name}/${f}`));
  }
  return out;
}

/** All entries of one folder through a cap, following cursors (bounded to 100 pages). */
export async function listNames(capUrl: string, folder: string): Promise<string[] | string> {
  const names: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const response = await call(
      `${capUrl}/list?path=${encodeURIComponent(folder)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (response.status !== 200) return `list ${folder}: ${response.status}`;
    const body = json(response) as { entries: { name: string }[]; cursor: string | null };
    names.push(...body.entries.map((e) => e.name));
    cursor = body.cursor;
    if (cursor === null) return names;
  }
  return `list ${folder}: more than 100 pages`;
}
