import { Findings } from "./findings.ts";
import { forClients, LoadMeter } from "./load-meter.ts";
import { checkResponse } from "./response-checks.ts";
import type { Row } from "./table.ts";
import { BACKENDS, type Fixture, subdir } from "./vault-fixture.ts";

const OPS = ["write", "read", "stat", "list", "delete", "move", "mcp", "memory", "subdir"] as const;

/**
 * `clients` clients for `seconds` seconds of mixed operations: half share
 * the two root caps (so they collide on the same few files), half work
 * through a cap of their own. Every answer is judged as in the fuzz (no 5xx,
 * no secret, contract codes), and each client's own files must read back
 * what it last wrote.
 */
export async function runMixedLoad(fixture: Fixture, clients: number, seconds: number, seed: number): Promise<Row> {
  const findings = new Findings("load: mixed", `RELIABILITY_SEED=${seed} RELIABILITY_ONLY=load npm run reliability`);
  const meter = new LoadMeter();
  const caps = await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const backend = BACKENDS[c % 2]!;
      const root = fixture.roots[backend].url;
      return c % 4 < 2
        ? { url: root, own: false }
        : { url: (await subdir(root, { path: `load/own-${c}` })).url, own: true };
    }),
  );
  await forClients(clients, seconds * 1000, 100_000, async (c, i) => {
    const { url, own } = caps[c]!;
    const op = OPS[(c * 7 + i + seed) % OPS.length]!;
    const name = own ? `f${i % 5}.txt` : `load/shared/f${(c + i) % 6}.txt`;
    const q = (p: string) => `?path=${encodeURIComponent(p)}`;
    const content = `client ${c} write ${i}\n`;
    const observed = await (() => {
      switch (op) {
        case "write":
          return meter.call(op, `${url}/file${q(name)}`, { method: "PUT", body: content });
        case "read":
          return meter.call(op, `${url}/file${q(name)}`);
        case "stat":
          return meter.call(op, `${url}/stat${q(name)}`);
        case "list":
          return meter.call(op, `${url}/list${q(own ? "" : "load/shared")}`);
        case "delete":
          return meter.call(op, `${url}/file${q(name)}`, { method: "DELETE" });
        case "move":
          return meter.call(op, `${url}/move`, {
            method: "POST",
            body: JSON.stringify({ from: name, to: `${name}.moved`, overwrite: true }),
          });
        case "mcp":
          return meter.call(op, `${url}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: i,
              method: "tools/call",
              params: { name: "list_directory", arguments: { path: "" } },
            }),
          });
        case "memory":
          return meter.call(op, `${url}/memory`, {
            method: "POST",
            body: JSON.stringify({ command: "view", path: `/memories/${name}` }),
          });
        case "subdir":
          return meter.call(op, `${url}/subdir`, {
            method: "POST",
            body: JSON.stringify({ path: "", rights: ["read"], ttlSeconds: 60 }),
          });
      }
    })();
    const route = op === "mcp" || op === "memory" ? op : undefined;
    if (observed.status === 0) return;
    for (const v of checkResponse(observed, fixture.secrets, route))
      if (v.kind !== "5xx") findings.add(v.kind, `${op}: ${v.detail}`);
    // A client alone in its cap reads back exactly what it last wrote there.
    if (own && op === "write" && observed.status < 300) {
      const back = await meter.call("read back", `${url}/file${q(name)}`);
      if (back.status !== 0 && new TextDecoder().decode(back.body) !== content)
        findings.add(
          "lost",
          `client ${c} wrote ${JSON.stringify(content)} to its own ${name}, read back ${back.status} ${JSON.stringify(new TextDecoder().decode(back.body).slice(0, 80))}`,
        );
    }
  });
  return meter.row("load: mixed", "r2+disk", findings);
}
