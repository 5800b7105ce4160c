import { compareUtf8 } from "../shared/utf8-order.ts";
import type { ListEntry } from "../shared/wire-types.ts";
import type { StorageListPage } from "../storage-adapters/storage-adapter.ts";
import { closeEnd, type DirChain, walk } from "./beneath.ts";
import { addressableNames, holdsFile } from "./dir-visibility.ts";
import type { HostContext } from "./host-context.ts";
import { modifiedIso } from "./meta-store.ts";

/**
 * One page of the folder `chain.top`: the names after `after` in UTF-8 byte
 * order, each link followed within the boundary. Entries a cap could not
 * read (links leading outside, dangling or looping, special files, folders
 * holding no file) are left out, so a listing shows only what the cap reaches.
 * `next` is the last name returned when more entries exist, else `null`.
 */
export async function listPage(
  ctx: HostContext,
  chain: DirChain,
  after: string | null,
  limit: number,
  atCapRoot: boolean,
): Promise<StorageListPage> {
  const names = (await addressableNames(chain.top, atCapRoot))
    .map((entry) => entry.name)
    .filter((name) => after === null || compareUtf8(name, after) > 0)
    .sort(compareUtf8);
  const entries: ListEntry[] = [];
  for (const name of names) {
    const entry = await describeEntry(ctx, chain, name);
    if (!entry) continue;
    if (entries.length === limit) return { entries, next: entries[limit - 1]!.name };
    entries.push(entry);
  }
  return { entries, next: null };
}

async function describeEntry(ctx: HostContext, chain: DirChain, name: string): Promise<ListEntry | null> {
  const end = await walk(chain, [{ name, fromLink: false }], { followFinal: true });
  if (!end.ok) return null;
  const found = end.value;
  try {
    if (found.kind === "file") {
      const { etag, sha256 } = await ctx.meta.validatorsOf(found.file, found.stat);
      return { name, type: "file", size: Number(found.stat.size), etag, sha256, modified: modifiedIso(found.stat) };
    }
    if (found.kind === "dir" && (await holdsFile(found.chain))) return { name, type: "dir" };
    return null;
  } finally {
    await closeEnd(found);
  }
}
