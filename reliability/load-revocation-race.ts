import type { Backend } from "../shared/wire-types.ts";
import { Findings } from "./findings.ts";
import { call, text } from "./http-call.ts";
import { LoadMeter } from "./load-meter.ts";
import type { Row } from "./table.ts";
import { listNames } from "./vault-files.ts";
import { type Fixture, put, subdir } from "./vault-fixture.ts";

const BEFORE_MS = 400;
const AFTER_REQUESTS = 10;
const MAX_MS = 30_000;

/**
 * The revocation race: `clients` clients hammer a grandchild cap (reads of a
 * seeded file, writes of new files) while its grandparent is revoked. Every
 * request sent after the revocation answered must fail, and no file written
 * by such a request may exist. A success there is authority that outlived
 * its revocation, so it counts as a leak.
 */
export async function runRevocationRace(fixture: Fixture, backend: Backend, clients: number): Promise<Row> {
  const findings = new Findings(
    "load: revocation race",
    `RELIABILITY_ONLY=load RELIABILITY_BACKEND=${backend} npm run reliability`,
  );
  const meter = new LoadMeter();
  const root = fixture.roots[backend].url;
  await put(root, "race/seed.txt", "readable until revoked\n");
  const grandparent = await subdir(root, { path: "race" });
  const parent = await subdir(grandparent.url, { path: "" });
  const grandchild = await subdir(parent.url, { path: "" });
  let revokedAt = Number.POSITIVE_INFINITY;
  const late: { name: string; status: number }[] = [];
  const started = Date.now();

  const client = async (c: number) => {
    let after = 0;
    for (let i = 0; after < AFTER_REQUESTS && Date.now() - started < MAX_MS; i++) {
      const sentAt = performance.now();
      const name = `w-${c}-${i}.txt`;
      const observed =
        i % 2 === 0
          ? await meter.call("read", `${grandchild.url}/file?path=seed.txt`)
          : await meter.call("write", `${grandchild.url}/file?path=${name}`, {
              method: "PUT",
              body: "written through the grandchild",
            });
      if (sentAt > revokedAt) {
        after++;
        late.push({ name: i % 2 === 0 ? "" : name, status: observed.status });
      }
    }
  };
  const revoke = (async () => {
    await new Promise((r) => setTimeout(r, BEFORE_MS));
    const answer = await call(grandparent.url, { method: "DELETE" });
    revokedAt = performance.now();
    if (answer.status !== 204 && answer.status !== 202)
      findings.add("other", `revoking the grandparent: ${answer.status} ${text(answer)}`);
  })();
  await Promise.all([revoke, ...Array.from({ length: clients }, (_, c) => client(c))]);

  for (const l of late.filter((l) => l.status >= 200 && l.status < 300).slice(0, 20))
    findings.add("leak", `${backend}: a request sent after the revocation answered succeeded (${l.status})`);
  const names = await listNames(root, "race");
  const lateWrites = new Set(late.map((l) => l.name).filter(Boolean));
  const landed = Array.isArray(names) ? names.filter((n) => lateWrites.has(n)) : [];
  for (const n of landed.slice(0, 20))
    findings.add("leak", `${backend}: ${n}, sent after the revocation answered, exists`);
  if (late.length < clients * AFTER_REQUESTS)
    findings.add("other", `${backend}: only ${late.length} requests were sent after the revocation`);
  return meter.row("load: revocation race", backend, findings, late.length);
}
