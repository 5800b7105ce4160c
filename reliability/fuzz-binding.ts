/**
 * The service binding's fuzz (docs/workers.md): seeded calls of every CapVault
 * method, with arguments of any JSON shape, from a consumer Worker beside the
 * vault's real bundle (test/node/binding-pair.ts), on four stubs: a root cap, a
 * read-only child, a revoked cap and a forged token. Judged per call:
 * - an answer is a value or a refusal whose text leads with a contract code,
 *   never another error (`other`) and never the consumer's route failing (`5xx`);
 * - no answer names the roots' prefix, a token of another stub, the token key,
 *   a host path or a stack (`leak`);
 * - the read-only stub changes nothing (`other`); the revoked and forged stubs
 *   answer every call with the same bytes.
 */
import fc from "fast-check";
import { isErrorCode } from "../shared/error-codes.ts";
import { startBindingPair } from "../test/node/binding-pair.ts";
import { Findings } from "./findings.ts";
import type { Row } from "./table.ts";

const ROLES = ["root", "reader", "revoked", "forged"] as const;
type Role = (typeof ROLES)[number];
/** Every method but `revoke` (it would end the roles) and `watch` (a callback is no JSON). */
const METHODS = [
  "read",
  "readText",
  "readStream",
  "write",
  "delete",
  "move",
  "stat",
  "list",
  "subdir",
  "info",
  "children",
  "share",
  "versions",
  "readVersion",
  "restore",
  "redact",
] as const;
const MUTATING = new Set(["write", "delete", "move", "subdir", "restore", "redact"]);
/** The roots' prefix: no answer may name it (a cap's paths are below its root). */
const PREFIX = "fuzz-binding-root-7c1e/";

interface BindingCase {
  role: Role;
  method: (typeof METHODS)[number];
  args: unknown[];
}

const path = fc.oneof(
  fc.constantFrom(
    "a.txt",
    "notes/b.md",
    "notes",
    "",
    "../a.txt",
    "/etc/passwd",
    ".capvault-versions/x",
    "a//b",
    "é/ü.md",
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 3 }).map((s) => `notes/${s}`),
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  path,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(
    fc.constantFrom("rights", "ttlSeconds", "limit", "cursor", "depth", "overwrite", "contentType", "length", "x"),
    fc.oneof(
      path,
      fc.integer(),
      fc.array(fc.constantFrom("read", "write", "list", "subdir", "delete", "x")),
      fc.constant(null),
    ),
    { maxKeys: 3 },
  ),
  fc.array(fc.constantFrom("read", "write", "list")),
);
const cases = fc.record({
  role: fc.constantFrom(...ROLES),
  method: fc.constantFrom(...METHODS),
  args: fc.oneof(
    fc.tuple(path),
    fc.tuple(path, value),
    fc.tuple(path, value, value),
    fc.array(value, { maxLength: 4 }),
  ),
}) as fc.Arbitrary<BindingCase>;

export async function runBindingFuzz(options: { cases: number; seed: number; only?: number }): Promise<Row> {
  const replay = `RELIABILITY_SEED=${options.seed} RELIABILITY_ONLY=fuzz RELIABILITY_SURFACE=binding RELIABILITY_CASE=<case> npm run reliability`;
  const findings = new Findings("fuzz binding", replay);
  const pair = await startBindingPair();
  try {
    const consume = async (body: Record<string, unknown>) => {
      const res = await pair.consume("/call", body);
      const text = await res.text();
      return { status: res.status, text };
    };
    const { token: root } = await pair.mintRoot(PREFIX);
    const http = (route: string, init?: RequestInit) => pair.vaultFetch(`/object/${root}${route}`, init);
    await http("/file?path=a.txt", { method: "PUT", body: "a" });
    await http("/file?path=notes/b.md", { method: "PUT", body: "b" });
    const mint = async (rights: string[]) =>
      (
        (await (await http("/subdir", { method: "POST", body: JSON.stringify({ path: "", rights }) })).json()) as {
          token: string;
        }
      ).token;
    const reader = await mint(["read", "list"]);
    const revoked = await mint(["read", "list"]);
    await pair.vaultFetch(`/object/${revoked}`, { method: "DELETE" });
    const forged = `${root.slice(0, -2)}${root.endsWith("zz") ? "yy" : "zz"}`;
    const tokens: Record<Role, string> = { root, reader, revoked, forged };
    const secrets = [PREFIX, root, reader, revoked, "/tmp/", "/work/", "    at "];
    const listing = async () =>
      (await (await http("/list?path=&depth=8&limit=1000")).text()).replace(/"modified":"[^"]*"/g, "");
    const seed = options.seed ^ 0x62696e64;
    const all = fc.sample(cases, { seed, numRuns: options.cases });
    const indices = options.only === undefined ? all.map((_, i) => i) : [options.only];
    const deadAnswers = new Map<string, string>();
    for (const i of indices) {
      const c = all[i]!;
      const at = (detail: string) =>
        `case ${i} (${c.role} ${c.method} ${JSON.stringify(c.args).slice(0, 120)}): ${detail}`;
      const before = c.role === "reader" ? await listing() : "";
      const answer = await consume({ token: tokens[c.role], method: c.method, args: c.args });
      if (answer.status >= 500)
        findings.add(
          "5xx",
          at(`the consumer's call failed: ${answer.status} ${answer.text.slice(0, 160)}`),
          replay.replace("<case>", String(i)),
        );
      let parsed: { ok: boolean; value?: unknown; message?: string };
      try {
        parsed = JSON.parse(answer.text) as typeof parsed;
      } catch {
        findings.add("other", at(`not JSON: ${answer.text.slice(0, 160)}`));
        continue;
      }
      const shown = parsed.ok ? JSON.stringify(parsed.value ?? null) : (parsed.message ?? "");
      for (const secret of secrets)
        if (shown.includes(secret) && !(c.method === "share" && secret === tokens[c.role]))
          findings.add(
            "leak",
            at(`the answer names ${secret === PREFIX ? "the root prefix" : "a secret"}: ${shown.slice(0, 160)}`),
          );
      if (!parsed.ok) {
        const code = /^([a-z_]+): /.exec(parsed.message ?? "")?.[1];
        if (!isErrorCode(code))
          findings.add("other", at(`a refusal outside the contract: ${parsed.message?.slice(0, 160)}`));
      }
      if (c.role === "revoked" || c.role === "forged") {
        if (parsed.ok) findings.add("other", at("a dead stub answered a value"));
        const key = `${c.method} ${JSON.stringify(c.args)}`;
        const other = deadAnswers.get(key);
        if (other !== undefined && other !== answer.text)
          findings.add("leak", at("revoked and forged answer differently"));
        deadAnswers.set(key, answer.text);
        if (parsed.message !== "no_such_cap: no such capability")
          findings.add("leak", at(`a dead stub's refusal: ${parsed.message}`));
      }
      if (c.role === "reader" && MUTATING.has(c.method)) {
        if (parsed.ok) findings.add("other", at("the read-only stub changed something"));
        if ((await listing()) !== before) findings.add("other", at("the files changed under a read-only stub"));
      }
    }
    return { check: "fuzz binding", backend: "r2", cases: indices.length, findings };
  } finally {
    await pair.stop();
  }
}
