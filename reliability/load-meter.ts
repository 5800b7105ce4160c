import type { Findings } from "./findings.ts";
import { call, type Observed } from "./http-call.ts";
import type { Row } from "./table.ts";

/**
 * Counts what a load check sends: requests, the peak number in flight (the
 * concurrency actually held, not just configured), 5xx answers, and
 * connections dropped without an answer.
 */
export class LoadMeter {
  requests = 0;
  peak = 0;
  fivexx: string[] = [];
  dropped: string[] = [];
  private inFlight = 0;

  async call(what: string, url: string, init?: RequestInit): Promise<Observed> {
    this.requests++;
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      const observed = await call(url, init);
      // A connection closed without an answer is recorded as a drop; the caller sees status 0 and moves on.
      if (observed.status >= 500)
        this.fivexx.push(`${what}: ${observed.status} ${new TextDecoder().decode(observed.body).slice(0, 120)}`);
      if (observed.status === 0) this.dropped.push(`${what}: ${observed.error}`);
      return observed;
    } finally {
      this.inFlight--;
    }
  }

  /** The check's table row: what it sent and held, its own findings plus every 5xx and drop counted here. */
  row(check: string, backend: string, findings: Findings, cases?: number): Row {
    for (const f of this.fivexx) findings.add("5xx", f);
    for (const f of this.dropped) findings.add("drop", f);
    return {
      check,
      backend,
      requests: this.requests,
      concurrency: this.peak,
      findings,
      ...(cases === undefined ? {} : { cases }),
    };
  }
}

/** Runs `clients` loops until `ms` have passed (each loop also stops after `maxIterations`). */
export async function forClients(
  clients: number,
  ms: number,
  maxIterations: number,
  body: (client: number, iteration: number) => Promise<void>,
): Promise<void> {
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; i < maxIterations && Date.now() < end; i++) await body(client, i);
    }),
  );
}
