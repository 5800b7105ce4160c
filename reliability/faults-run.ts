import { bigWriteFault } from "./faults-big-write.ts";
import { cascadeFault } from "./faults-cascade.ts";
import { smallWritesFault } from "./faults-small-writes.ts";
import { Findings } from "./findings.ts";
import type { Scale } from "./scale.ts";
import type { Row } from "./table.ts";
import { hostNames } from "./vault-files.ts";
import { BACKENDS, type Fixture } from "./vault-fixture.ts";
import { vaultHealth } from "./vault-health.ts";

/**
 * SIGKILL of the launcher's whole process group in the middle of work, then
 * a restart on the same state. Round 1 kills concurrent small overwrites on
 * both backends together with a revocation cascade; further rounds kill more
 * small writes; then one big write per backend, killed half-sent. After each
 * restart: the checks of each fault, no temp left on the host, a healthy vault.
 */
export async function runFaults(fixture: Fixture, scale: Scale, seed: number): Promise<Row[]> {
  const replay = `RELIABILITY_SEED=${seed} RELIABILITY_ONLY=faults RELIABILITY_SCALE=${scale.name} npm run reliability`;
  const small = new Findings("faults: small writes + cascade", replay);
  const big = new Findings("faults: big writes", replay);
  let smallKills = 0;
  let bigKills = 0;
  let capsChecked = 0;
  const notes: string[] = [];
  const killAndRestart = async (findings: Findings) => {
    await fixture.vault.kill();
    await fixture.vault.restart();
    const temps = (await hostNames(fixture.vault.diskRoot)).filter((n) =>
      n.split("/").some((s) => s.startsWith(".capvault-tmp")),
    );
    if (temps.length > 0)
      findings.add("other", `temp files left on the host after the restart: ${temps.slice(0, 3).join(", ")}`);
    for (const backend of BACKENDS)
      for (const p of await vaultHealth(fixture, backend))
        findings.add("other", `after the restart (${backend}): ${p}`);
  };

  for (let round = 0; round < scale.smallWriteKills; round++) {
    const writes = smallWritesFault(fixture, round);
    const cascade = round === 0 ? cascadeFault(fixture, scale.cascadeCaps) : null;
    await writes.prepare();
    await cascade?.prepare();
    writes.start();
    cascade?.start();
    // Kill in the middle: once the first overwrite was answered (the rest are in flight) and the cascade's top is
    // dead (its descendants are being reached), plus a seeded jitter so replays kill at about the same moment.
    await Promise.race([
      Promise.all([writes.firstAnswered(), cascade?.topRevoked()]),
      new Promise((r) => setTimeout(r, 15_000)),
    ]);
    await new Promise((r) => setTimeout(r, ((seed >>> 0) + round * 7919) % 10));
    await killAndRestart(small);
    smallKills++;
    const files = await writes.verify(small);
    notes.push(`kill ${round + 1}: small files left old ${files.old}, new ${files.new}`);
    if (cascade) {
      const caps = await cascade.verify(small);
      notes.push(
        `kill ${round + 1}: cascade of ${scale.cascadeCaps} caps left ${caps.alive} alive, ${caps.revoked} revoked`,
      );
      capsChecked += scale.cascadeCaps;
    }
  }
  const rows: Row[] = [
    {
      check: "faults: small writes + cascade",
      backend: "r2+disk",
      faults: smallKills,
      cases: capsChecked,
      findings: small,
      notes,
    },
  ];
  const bigNotes: string[] = [];

  if (scale.bigWriteBytes > 0) {
    for (const backend of BACKENDS) {
      const fault = bigWriteFault(fixture, backend, scale.bigWriteBytes);
      await fault.prepare();
      fault.start();
      await fault.halfSent();
      await killAndRestart(big);
      bigKills++;
      bigNotes.push(`${backend}: the big file was ${await fault.verify(big)} after the kill`);
    }
    rows.push({
      check: `faults: ${scale.bigWriteBytes >> 20} MiB writes`,
      backend: "r2+disk",
      faults: bigKills,
      findings: big,
      notes: bigNotes,
    });
  }
  return rows;
}
