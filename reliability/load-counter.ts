import type { Backend } from "../shared/wire-types.ts";
import { Findings } from "./findings.ts";
import { header, text } from "./http-call.ts";
import { forClients, LoadMeter } from "./load-meter.ts";
import type { Row } from "./table.ts";
import { type Fixture, put } from "./vault-fixture.ts";

const MAX_SECONDS = 120;

/**
 * Lost updates: `clients` clients each add 1 to one counter file `increments`
 * times by read, then write with `If-Match` the etag they read, retrying on
 * 412. Afterwards the counter must equal the number of writes answered 2xx.
 * A write whose answer never came might have landed: the final value may
 * then exceed the successes by at most that many.
 */
export async function runCounter(
  fixture: Fixture,
  backend: Backend,
  clients: number,
  increments: number,
): Promise<Row> {
  const findings = new Findings(
    `load: counter`,
    `RELIABILITY_ONLY=load RELIABILITY_BACKEND=${backend} npm run reliability`,
  );
  const meter = new LoadMeter();
  const cap = fixture.roots[backend].url;
  const url = `${cap}/file?path=${encodeURIComponent("load/counter.txt")}`;
  await put(cap, "load/counter.txt", "0");
  let successes = 0;
  let unanswered = 0;
  const done = new Array<number>(clients).fill(0);
  await forClients(clients, MAX_SECONDS * 1000, increments * 200, async (c) => {
    if (done[c]! >= increments) return;
    const read = await meter.call("read", url);
    const etag = header(read, "etag");
    if (read.status !== 200 || etag === null)
      return void findings.add("other", `counter read: ${read.status} ${text(read).slice(0, 80)}`);
    const write = await meter.call("write", url, {
      method: "PUT",
      headers: { "if-match": etag },
      body: String(Number(text(read)) + 1),
    });
    if (write.status === 200 || write.status === 201) {
      successes++;
      done[c]!++;
    } else if (write.status === 0) unanswered++;
    else if (write.status !== 412) findings.add("other", `counter write: ${write.status} ${text(write).slice(0, 80)}`);
  });
  const final = Number(text(await meter.call("final read", url)));
  if (final < successes)
    findings.add("lost", `${backend}: counter is ${final} after ${successes} successful increments`);
  for (let i = 1; i < successes - final; i++) findings.add("lost", `${backend}: (one more lost update)`);
  if (final > successes + unanswered)
    findings.add(
      "other",
      `${backend}: counter is ${final}, more than ${successes} successes + ${unanswered} unanswered`,
    );
  if (done.some((n) => n < increments))
    findings.add(
      "other",
      `${backend}: not every client landed its ${increments} increments within ${MAX_SECONDS}s (${done.join(",")})`,
    );
  return meter.row("load: counter (If-Match)", backend, findings, successes);
}
