import { ok, type Result } from "../shared/result.ts";
import type { CapTree, CapTreeNode, ChildView } from "../shared/wire-types.ts";
import type { ChildRecord } from "./cap-record.ts";
import { CHILD } from "./child-index.ts";
import { childPage } from "./child-page.ts";

/** Levels below the cap that `GET /tree` walks. */
export const DELEGATION_TREE_MAX_DEPTH = 6;
/** Caps one `GET /tree` answer holds: it bounds the RPC calls and the answer's size whatever the tree. */
export const DELEGATION_TREE_MAX_NODES = 300;
/** Child objects asked at once, so one walk cannot flood the runtime with calls. */
const FANOUT = 8;

/** A live child as an ancestor's walk needs it: its view for the answer, its key to reach its object. */
export interface DelegationChild {
  view: ChildView;
  /** The token digest naming its object; it never leaves the objects (the answer carries ids only). */
  key: string;
}

/** Asks the object named `key` for up to `limit` of its own live children (none when it is dead). */
export type ChildrenOf = (key: string, limit: number) => Promise<Result<DelegationChild[]>>;

/** Up to `limit` live children of this cap, in creation order, with the keys that reach them. */
export async function liveChildren(storage: DurableObjectStorage, limit: number): Promise<Result<DelegationChild[]>> {
  const page = await childPage(storage, null, String(Math.max(1, Math.min(limit, 1000))));
  if (!page.ok) return page;
  const records = await storage.get<ChildRecord>(page.value.children.map((c) => CHILD + c.id));
  const out: DelegationChild[] = [];
  for (const view of page.value.children) {
    const record = records.get(CHILD + view.id);
    if (record) out.push({ view, key: record.key });
  }
  return ok(out);
}

/** A cap the walk reached: its key, its parent's key (`null` for the walker's own child), its root from the walker's. */
export interface Reached {
  key: string;
  parent: string | null;
  path: string;
}

/** The answer for `GET /tree`, and every cap it shows by id, for revoking one of them. */
export interface DelegationTreeWalk {
  tree: CapTree;
  index: Map<string, Reached>;
}

/**
 * Walks the tree below a cap breadth first, one level at a time, asking each
 * node's object for its children. The node budget is shared by the whole
 * walk, so it makes at most DELEGATION_TREE_MAX_NODES calls and answers at most that
 * many nodes, however wide or deep the tree is. A child that cannot be asked
 * shows with no children, and the answer says it is truncated.
 */
export async function walkDelegationTree(
  id: string,
  own: DelegationChild[],
  childrenOf: ChildrenOf,
): Promise<DelegationTreeWalk> {
  const index = new Map<string, Reached>();
  let budget = DELEGATION_TREE_MAX_NODES;
  let truncated = own.length > budget;
  const top = own.slice(0, budget).map((c) => ({ node: { ...c.view, children: [] } as CapTreeNode, key: c.key }));
  for (const t of top) index.set(t.node.id, { key: t.key, parent: null, path: t.node.path });
  budget -= top.length;
  let level = top;
  for (let depth = 2; level.length > 0; depth++) {
    if (depth > DELEGATION_TREE_MAX_DEPTH || budget === 0) {
      truncated = true;
      break;
    }
    const next: typeof level = [];
    await forEachBounded(level, async ({ node, key }) => {
      // Asking for one more than the budget tells whether the budget cut this level.
      const kids = await childrenOf(key, budget + 1).catch(() => null);
      if (!kids?.ok) {
        truncated = true;
        return;
      }
      for (const kid of kids.value) {
        if (budget === 0) {
          truncated = true;
          return;
        }
        budget--;
        const child: CapTreeNode = { ...kid.view, children: [] };
        node.children.push(child);
        next.push({ node: child, key: kid.key });
        const above = index.get(node.id)!;
        const path = [above.path, kid.view.path].filter((p) => p !== "").join("/");
        index.set(child.id, { key: kid.key, parent: above.key, path });
      }
    });
    level = next;
  }
  return { tree: { id, children: top.map((t) => t.node), truncated }, index };
}

async function forEachBounded<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(FANOUT, items.length) }, lane));
}
