/**
 * examples/agent-worker runs locally as docs/workers.md says: `wrangler dev`
 * with the example's config first and the vault's beside it, one process,
 * the Agent reaching its files through the vault's CapVault binding. Real
 * wrangler, real Agents SDK, the vault's own wrangler.toml.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { unusedPort } from "./test-vault.ts";

const ADMIN = randomBytes(24).toString("base64url");
let work: string;
let dev: ChildProcess;
let origin: string;
let log = "";

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "capvault-agent-example-"));
  const port = await unusedPort();
  origin = `http://127.0.0.1:${port}`;
  // The vault's secrets and its public URL, from a file as .dev.vars would hold them: never on a command line.
  const envFile = path.join(work, "vault.env");
  const key = randomBytes(32).toString("base64url");
  await writeFile(
    envFile,
    `CAPVAULT_ADMIN_TOKEN=${ADMIN}\nCAPVAULT_TOKEN_KEY=${key}\nCAPVAULT_PUBLIC_URL=${origin}\n`,
    {
      mode: 0o600,
    },
  );
  const args = ["-c", "examples/agent-worker/wrangler.toml", "-c", "wrangler.toml"];
  args.push(
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    path.join(work, "state"),
    "--env-file",
    envFile,
    // Its devtools port too, a free one: the default (9229) may be another process's.
    "--inspector-ip",
    "127.0.0.1",
    "--inspector-port",
    String(await unusedPort()),
  );
  dev = spawn(path.join(PROJECT_ROOT, "node_modules/.bin/wrangler"), ["dev", ...args], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    // Without the CAPVAULT_* this process has (the workers project's config sets two): wrangler would take them first.
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("CAPVAULT_"))),
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      CI: "true",
    },
  });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes(`Ready on ${origin}`)) resolve();
    };
    dev.stdout!.on("data", onData);
    dev.stderr!.on("data", onData);
    dev.once("exit", (code) => reject(new Error(`wrangler dev exited with ${code}:\n${log}`)));
  });
}, 120_000);

afterAll(async () => {
  if (dev?.pid) {
    const exited = new Promise((resolve) => dev.once("exit", resolve));
    try {
      process.kill(-dev.pid, "SIGTERM");
      await exited;
    } catch {}
  }
  await rm(work, { recursive: true, force: true });
});

async function mint(body: Record<string, unknown>, from = `${origin}/admin/roots`, admin = true) {
  const res = await fetch(from, {
    method: "POST",
    headers: { ...(admin ? { authorization: `Bearer ${ADMIN}` } : {}), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { token: string; url: string };
}

const agent = (name: string, route: string, init?: RequestInit) =>
  fetch(`${origin}/agents/notes-agent/${name}/${route}`, init);

describe("examples/agent-worker under wrangler dev, beside the vault", () => {
  it("an Agent given a cap writes and reads its files through the binding; the vault sees them", async () => {
    const root = await mint({ backend: "r2", prefix: "agents/alice/" });
    expect((await agent("alice", "cap", { method: "PUT", body: root.token })).status).toBe(204);
    expect((await agent("alice", "file?path=notes/a.md", { method: "PUT", body: "hello" })).status).toBe(204);
    expect(await (await agent("alice", "file?path=notes/a.md")).text()).toBe("hello");
    expect(await (await fetch(`${root.url}/file?path=notes/a.md`)).text()).toBe("hello");
    const listed = (await (await agent("alice", "ls?path=notes")).json()) as { name: string }[];
    expect(listed.map((e) => e.name)).toEqual(["a.md"]);
  });

  it("an Agent given a read-only cap reads and is refused writes; a revocation cuts it off at its next call", async () => {
    const root = await mint({ backend: "r2", prefix: "agents/bob/" });
    await fetch(`${root.url}/file?path=a.md`, { method: "PUT", body: "shared" });
    const reader = await mint({ path: "", rights: ["read", "list"] }, `${root.url}/subdir`, false);
    expect((await agent("bob", "cap", { method: "PUT", body: reader.token })).status).toBe(204);
    expect(await (await agent("bob", "file?path=a.md")).text()).toBe("shared");
    const refused = await agent("bob", "file?path=a.md", { method: "PUT", body: "mine" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/^EACCES: .*\(forbidden: /);
    expect(await (await fetch(`${root.url}/file?path=a.md`)).text()).toBe("shared");
    expect((await fetch(reader.url, { method: "DELETE" })).status).toBe(204);
    const cut = await agent("bob", "file?path=a.md");
    expect(cut.status).toBe(403);
    expect(((await cut.json()) as { message: string }).message).toContain("no_such_cap");
  });
});
