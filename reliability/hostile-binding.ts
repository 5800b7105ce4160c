/**
 * The service binding's rows of the hostile table (docs/workers.md): a
 * consumer Worker beside the vault's real bundle in one Miniflare
 * (test/node/binding-pair.ts) sends each hostile call over the CapVault
 * binding, while a cheap read through the same binding, on another cap,
 * measures how long it waits. The CPU is the workerd process's, both workers
 * included, so an upper bound.
 */
import { childPids, processCpuMs } from "../bench/proc-stats.ts";
import { startBindingPair } from "../test/node/binding-pair.ts";
import { floorWriteDelay } from "./hostile-floor.ts";
import { type HostileRow, hostileCaseChosen } from "./hostile-requests.ts";

const MiB = 1024 * 1024;
/** One read's bytes over RPC (worker/rpc/rpc-limits.ts readBytes). */
const READ_BYTES = 4 * MiB;

interface BindingCase {
  name: string;
  setup?(consume: Consume): Promise<void>;
  send(consume: Consume): Promise<string>;
}

type Consume = (
  route: string,
  body: Record<string, unknown>,
) => Promise<{ ok: boolean; value?: unknown; message?: string }>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const outcomeOf = (a: { ok: boolean; value?: unknown; message?: string }) =>
  a.ok ? `ok ${JSON.stringify(a.value).slice(0, 50)}` : (a.message ?? "refused").slice(0, 80);

function cases(token: string): BindingCase[] {
  const write = (file: string, bytes: number) => ({ token, file, send: bytes, length: bytes });
  return [
    {
      name: "binding: 1,000 stat calls at once on one stub",
      send: async (consume) => outcomeOf(await consume("/flood", { token, n: 1000, method: "stat", args: ["a.txt"] })),
    },
    {
      name: "binding: 1,000 calls at once on a forged token's stub (Workers RPC alone: no object is asked)",
      send: async (consume) =>
        outcomeOf(
          await consume("/flood", { token: `${token.slice(0, -2)}zz`, n: 1000, method: "stat", args: ["a.txt"] }),
        ),
    },
    {
      name: "binding: a chain of 16 pipelined mints, then a read at its end",
      setup: async (consume) => void (await consume("/call", { token, method: "write", args: ["a.txt", "a"] })),
      send: async (consume) => outcomeOf(await consume("/chain-deep", { token, depth: 16, file: "a.txt" })),
    },
    {
      name: "binding: a chain of 17 (one mint past the stub's allowance)",
      send: async (consume) => outcomeOf(await consume("/chain-deep", { token, depth: 17, file: "a.txt" })),
    },
    {
      name: "binding: read() of a 4 MiB file (the bound of bytes held whole)",
      setup: async (consume) => void (await consume("/stream-write", write("four.bin", READ_BYTES))),
      send: async (consume) => outcomeOf(await consume("/call", { token, method: "read", args: ["four.bin"] })),
    },
    {
      name: "binding: read() of 4 MiB + 1 (one past it)",
      setup: async (consume) => void (await consume("/stream-write", write("four1.bin", READ_BYTES + 1))),
      send: async (consume) => outcomeOf(await consume("/call", { token, method: "read", args: ["four1.bin"] })),
    },
    {
      name: "binding: a 2 MiB stream written (the HTTP table's write size)",
      send: async (consume) => outcomeOf(await consume("/stream-write", write("two.bin", 2 * MiB))),
    },
    {
      name: "binding: a 2 MiB file read as a stream, drained by the consumer",
      send: async (consume) => outcomeOf(await consume("/drain", { token, file: "two.bin" })),
    },
    {
      name: "binding: a 64 MiB stream written",
      send: async (consume) => outcomeOf(await consume("/stream-write", write("big.bin", 64 * MiB))),
    },
    {
      name: "binding: a 64 MiB file read as a stream, drained by the consumer",
      send: async (consume) => outcomeOf(await consume("/drain", { token, file: "big.bin" })),
    },
  ];
}

export async function bindingHostileRows(onRow: (row: HostileRow) => void): Promise<HostileRow[]> {
  const chosen = (token: string) => cases(token).filter((c) => hostileCaseChosen(c.name));
  if (chosen("").length === 0) return [];
  const pair = await startBindingPair();
  const rows: HostileRow[] = [];
  let token = "";
  try {
    const consume: Consume = async (route, body) => (await pair.consume(route, body)).json() as never;
    token = (await pair.mintRoot("hostile-binding/")).token;
    const other = (await pair.mintRoot("hostile-binding-other/")).token;
    await consume("/call", { token: other, method: "write", args: ["cheap.txt", "cheap"] });
    const cheapRead = async () => {
      const started = performance.now();
      const answer = await consume("/call", { token: other, method: "readText", args: ["cheap.txt"] });
      if (!answer.ok) throw new Error(`the cheap read was refused: ${answer.message}`);
      return performance.now() - started;
    };
    const pids = await childPids(process.pid, "workerd");
    for (const hostile of chosen(token)) {
      await hostile.setup?.(consume);
      const idle: number[] = [];
      for (let i = 0; i < 15; i++) idle.push(await cheapRead());
      let running = true;
      const cpuBefore = await processCpuMs(pids);
      const started = performance.now();
      const request = hostile.send(consume).finally(() => {
        running = false;
      });
      let worst = 0;
      while (running) worst = Math.max(worst, await cheapRead());
      const outcome = await request;
      const row: HostileRow = {
        case: hostile.name,
        ms: Math.round(performance.now() - started),
        cheapReadMaxDelayMs: Math.max(0, Math.round(worst - median(idle))),
        vaultCpuMs: (await processCpuMs(pids)) - cpuBefore,
        outcome,
      };
      rows.push(row);
      onRow(row);
    }
  } finally {
    await pair.stop();
  }
  // The floor of the 64 MiB write: the same bytes put straight into a bare
  // worker's R2 binding on the same runtime (after the pair has stopped, so
  // its workerd is the only one measured). Locally R2 is simulated inside
  // workerd, on the thread every worker shares; on Cloudflare it is not.
  if (!chosen(token).some((c) => c.name.includes("64 MiB stream written"))) return rows;
  const floor = await floorWriteDelay(64 * MiB);
  rows.push(floor);
  onRow(floor);
  return rows;
}
