import fc from "fast-check";
import type { Backend } from "../shared/wire-types.ts";
import { type FindingKind, Findings } from "./findings.ts";
import type { FuzzCase } from "./fuzz-case.ts";
import { fuzzCase } from "./fuzz-requests.ts";
import { type FuzzTarget, fuzzTarget, send } from "./fuzz-target.ts";
import { header } from "./http-call.ts";
import { checkResponse } from "./response-checks.ts";
import type { Row } from "./table.ts";
import type { Fixture } from "./vault-fixture.ts";
import { vaultHealth } from "./vault-health.ts";

const IN_FLIGHT = Number(process.env.RELIABILITY_FUZZ_IN_FLIGHT ?? 4);
const CASE_TIMEOUT_MS = 30_000;
const HEALTH_EVERY = 1_000;

export interface FuzzOptions {
  cases: number;
  seed: number;
  /** Replay: run only this case index. */
  only?: number;
}

/**
 * The fuzz of one backend: `cases` seeded requests (the same ones on both
 * backends, since the seed fixes them), a few in flight at once, every
 * response judged by checkResponse, and a health check every thousand cases
 * and at the end. Replay one case with RELIABILITY_SEED and RELIABILITY_CASE.
 */
export async function runFuzz(
  fixture: Fixture,
  backend: Backend,
  options: FuzzOptions,
): Promise<{ row: Row; findings: Findings }> {
  const replay = `RELIABILITY_SEED=${options.seed} RELIABILITY_ONLY=fuzz RELIABILITY_CASE=`;
  const findings = new Findings(
    `fuzz ${backend}`,
    `${replay}<case> RELIABILITY_BACKEND=${backend} npm run reliability`,
  );
  const target = await fuzzTarget(fixture, backend);
  const cases = fc.sample(fuzzCase(fixture.plantedNames), { seed: options.seed, numRuns: options.cases });
  const indices = options.only === undefined ? cases.map((_, i) => i) : [options.only];
  let next = 0;
  let tried = 0;
  const inFlight = new Set<number>();
  const worker = async () => {
    while (next < indices.length) {
      const index = indices[next++]!;
      // A drop names the cases in flight beside it: the likely culprit is one of them.
      const beside = () =>
        [...inFlight]
          .filter((i) => i !== index)
          .map((i) => `#${i} ${cases[i]!.kind}`)
          .join(", ");
      const report = (kind: FindingKind, detail: string) =>
        findings.add(
          kind,
          `#${index} ${cases[index]!.kind}: ${detail}${kind === "drop" ? ` (in flight: ${beside()})` : ""}`,
          `${replay}${index} RELIABILITY_BACKEND=${backend} npm run reliability`,
        );
      inFlight.add(index);
      await runCase(target, cases[index]!, fixture.secrets, report).catch((error: unknown) =>
        report("other", `the case threw: ${String(error)}`),
      );
      inFlight.delete(index);
      tried++;
      if (tried % HEALTH_EVERY === 0)
        for (const p of await vaultHealth(fixture, backend)) findings.add("other", `after ${tried} cases: ${p}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  for (const p of await vaultHealth(fixture, backend)) findings.add("other", `after the fuzz: ${p}`);
  return { row: { check: "fuzz", backend, cases: tried, concurrency: IN_FLIGHT, findings }, findings };
}

async function runCase(
  target: FuzzTarget,
  c: FuzzCase,
  secrets: readonly string[],
  report: (kind: FindingKind, detail: string) => void,
): Promise<void> {
  const raw = c.declaredLength !== undefined;
  let observed = await send(target, c, CASE_TIMEOUT_MS);
  // On a raw socket with a lying length, the server may rightly hang up without an answer.
  if (raw && observed.status === 0) return;
  // A pooled connection closed under the request: counted, and the case is sent again on a connection of its
  // own, so it is still judged. Seen: after refusing a request whose body it did not read, the vault answers
  // without `Connection: close` and then closes the connection, so the client's next request on it dies.
  if (observed.status === 0 && /closed|ECONNRESET/.test(observed.error ?? "")) {
    report("drop", `connection closed without an answer (${observed.error}); sent again`);
    observed = await send(target, c, CASE_TIMEOUT_MS, true);
  }
  for (const v of checkResponse(observed, secrets, c.toolRoute, c.method === "HEAD")) report(v.kind, v.detail);
  const sent = typeof c.body === "string" ? c.body.length : (c.body?.length ?? 0);
  if (raw && c.declaredLength! > sent && observed.status >= 200 && observed.status < 300) {
    report(
      "other",
      `stored a body shorter than its Content-Length (${sent} of ${c.declaredLength}): ${observed.status} etag ${header(observed, "etag")}`,
    );
  }
}
