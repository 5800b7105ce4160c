import type { Findings } from "./findings.ts";
import { call, json, type Observed } from "./http-call.ts";
import { type Fixture, subdir } from "./vault-fixture.ts";

const FAN_OUT = 10;
const MINT_IN_FLIGHT = 8;
/** How long revoked ancestors may take to reach their descendants after the restart (alarms retry every 5 s). */
const SETTLE_MS = 45_000;

interface Node {
  url: string;
  parent: number;
}

type State = "alive" | "revoked" | "half";

/**
 * Alive means every route answers as alive; revoked, every route says
 * no_such_cap. Asked in order, info first: alive then dead is a revocation
 * landing in between (asked again), dead then alive is a half-revoked cap.
 */
async function stateOf(url: string, again = true): Promise<State> {
  const dead = (o: Observed) =>
    o.status === 404 && (json(o) as { error?: { code?: string } })?.error?.code === "no_such_cap";
  const info = await call(url);
  const children = await call(`${url}/children`);
  if (info.status === 200 && children.status === 200) return "alive";
  if (dead(info) && dead(children)) return "revoked";
  if (info.status === 200 && dead(children) && again) return stateOf(url, false);
  return "half";
}

/**
 * A tree of `size` caps (fan-out 10) whose top is revoked when the launcher
 * dies. After the restart every cap must be fully alive or fully revoked,
 * and once the cascade's alarms had time, no cap may be alive under a revoked
 * ancestor. The top is then revoked again and all must be dead.
 */
export function cascadeFault(fixture: Fixture, size: number) {
  const nodes: Node[] = [];
  let revoking: Promise<unknown> = Promise.resolve();
  return {
    async prepare(): Promise<void> {
      const top = await subdir(fixture.roots.r2.url, { path: "cascade", label: "cascade top" });
      nodes.push({ url: top.url, parent: -1 });
      for (let parent = 0; nodes.length < size; parent++) {
        const want = Math.min(FAN_OUT, size - nodes.length);
        for (let first = 0; first < want; first += MINT_IN_FLIGHT) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(MINT_IN_FLIGHT, want - first) }, () =>
              subdir(nodes[parent]!.url, { path: "" }),
            ),
          );
          nodes.push(...batch.map((m) => ({ url: m.url, parent })));
        }
      }
    },
    start(): void {
      revoking = call(nodes[0]!.url, { method: "DELETE" });
    },
    /** Resolves once the top answers no_such_cap (or after 10 s): the cascade below it is then under way. */
    async topRevoked(): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await call(nodes[0]!.url)).status === 200)
        await new Promise((r) => setTimeout(r, 2));
    },
    async verify(findings: Findings): Promise<{ alive: number; revoked: number }> {
      await revoking;
      const states = await statesOf(nodes);
      for (const [i, s] of states.entries())
        if (s === "half") findings.add("other", `cap #${i} of the cascade is half revoked after the kill`);
      const deadline = Date.now() + SETTLE_MS;
      let orphans = orphansOf(nodes, states);
      while (orphans.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1_000));
        orphans = orphansOf(nodes, await statesOf(nodes));
      }
      for (const i of orphans.slice(0, 5))
        findings.add(
          "other",
          `cap #${i} still alive ${SETTLE_MS / 1000}s after an ancestor was revoked (${orphans.length} such)`,
        );
      const counts = {
        alive: states.filter((s) => s === "alive").length,
        revoked: states.filter((s) => s === "revoked").length,
      };
      // Finish the job and check it is finished.
      await call(nodes[0]!.url, { method: "DELETE" });
      let left = (await statesOf(nodes)).filter((s) => s !== "revoked").length;
      const end = Date.now() + SETTLE_MS;
      while (left > 0 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 1_000));
        left = (await statesOf(nodes)).filter((s) => s !== "revoked").length;
      }
      if (left > 0) findings.add("other", `${left} caps of the cascade still alive after revoking the top again`);
      return counts;
    },
  };
}

async function statesOf(nodes: readonly Node[]): Promise<State[]> {
  const states: State[] = [];
  for (let i = 0; i < nodes.length; i += 16)
    states.push(...(await Promise.all(nodes.slice(i, i + 16).map((n) => stateOf(n.url)))));
  return states;
}

/** Caps alive although some ancestor is revoked. */
function orphansOf(nodes: readonly Node[], states: readonly State[]): number[] {
  const deadAbove = (i: number): boolean => {
    for (let p = nodes[i]!.parent; p >= 0; p = nodes[p]!.parent) if (states[p] !== "alive") return true;
    return false;
  };
  return nodes.map((_, i) => i).filter((i) => states[i] === "alive" && deadAbove(i));
}
