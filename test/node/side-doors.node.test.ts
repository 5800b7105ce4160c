import { readFile, stat, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCallHead } from "../../storage-adapters/disk-protocol.ts";
import { groupPids, isLoopback, type ListeningSocket, listeningSockets } from "./process-sockets.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

/**
 * The cap must be the only way in: every socket of the vault's processes
 * other than the public port is tried with the two requests that read and
 * wrote host files through Miniflare's loopback server, and with raw disk
 * host calls. None may serve anything.
 */

type Answer = { status: number; body: string } | { refused: string };

/** One HTTP request to a TCP port or a Unix socket; a reset or refusal is an answer too. */
function send(
  target: ListeningSocket,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body: Uint8Array | string,
): Promise<Answer> {
  return new Promise((resolve) => {
    const where = target.kind === "tcp" ? { host: "127.0.0.1", port: target.port } : { socketPath: target.path };
    const req = httpRequest(
      {
        ...where,
        method,
        path: urlPath,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", (e) => resolve({ refused: e.message }));
      },
    );
    req.on("error", (e) => resolve({ refused: e.message }));
    // A socket that never answers (another protocol) has served nothing either.
    req.setTimeout(3_000, () => req.destroy(new Error("no answer")));
    req.end(body);
  });
}

/** Tries every known way through an internal socket; returns what leaked. */
async function attack(
  target: ListeningSocket,
  canary: { file: string; text: string },
  plantedDir: string,
): Promise<string[]> {
  const leaks: string[] = [];
  // 1. Miniflare's pretty-error route renders source files named in a forged stack.
  const forged = JSON.stringify({ name: "Error", message: "x", stack: `Error: x\n    at f (${canary.file}:1:1)` });
  for (const accept of ["text/html", "*/*"]) {
    const a = await send(target, "POST", "/core/error", { accept, "content-type": "application/json" }, forged);
    if ("body" in a && a.body.includes(canary.text)) leaks.push(`/core/error (${accept}) returned the canary`);
  }
  // 2. Miniflare's temp-file route writes where its query points.
  // Enough `..` to climb out of Miniflare's temp folder to /, then down to the target.
  const rel = "../".repeat(32) + plantedDir.slice(1);
  const store = await send(
    target,
    "POST",
    `/core/store-temp-file?prefix=${encodeURIComponent(rel)}&extension=txt`,
    {},
    "planted",
  );
  // It answers with the path it wrote; whether anything landed is checked on disk too.
  if ("body" in store && store.body.startsWith("/")) leaks.push(`/core/store-temp-file wrote ${store.body}`);
  // 3. The disk host's own protocol, without and with a guessed secret.
  for (const secret of [undefined, "guessed-secret-0123456789"]) {
    const headers: Record<string, string> = {
      "MF-Custom-Fetch-Service": "0/#DISK",
      ...(secret ? { "capvault-disk-secret": secret } : {}),
    };
    const read = await send(
      target,
      "POST",
      "/read",
      headers,
      encodeCallHead({ op: "read", root: [""], path: ["private.txt"], range: null, ifNoneMatch: null } as never),
    );
    if ("body" in read && read.body.includes("host secret")) leaks.push("a disk read answered without the secret");
    const head = encodeCallHead({
      op: "write",
      root: [""],
      path: ["planted.txt"],
      length: 7,
      contentType: "x",
      ifMatch: null,
      ifNoneMatch: null,
    } as never);
    await send(target, "POST", "/write", headers, Buffer.concat([head, Buffer.from("planted")]));
  }
  return leaks;
}

async function plantedFiles(vault: TestVault, plantedDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const p of [path.join(vault.diskRoot, "planted.txt"), plantedDir]) {
    if (
      await stat(p).then(
        () => true,
        () => false,
      )
    )
      found.push(p);
  }
  return found;
}

describe.each([
  { name: "HOST=127.0.0.1", env: {} as Record<string, string> },
  { name: "HOST=0.0.0.0", env: { HOST: "0.0.0.0", CAPVAULT_PUBLIC_URL: "http://vault.test:8787" } },
])("internal sockets, $name", ({ env }) => {
  let vault: TestVault;
  let sockets: ListeningSocket[];
  let publicPort: number;

  beforeAll(async () => {
    vault = await startTestVault({ env });
    publicPort = Number(new URL(vault.url).port);
    await writeFile(path.join(vault.diskRoot, "private.txt"), "host secret");
    sockets = await listeningSockets(vault.pgid);
  }, 120_000);
  afterAll(async () => {
    await vault?.stop();
  });

  it("finds the public port and at least one internal socket to try", () => {
    expect(sockets.some((s) => s.kind === "tcp" && s.port === publicPort)).toBe(true);
    expect(sockets.filter((s) => !(s.kind === "tcp" && s.port === publicPort)).length).toBeGreaterThan(0);
  });

  it("listens beyond loopback on the public port only", () => {
    const exposed = sockets.filter((s) => s.kind === "tcp" && !isLoopback(s.address));
    for (const s of exposed) expect(s.kind === "tcp" && s.port, JSON.stringify(s)).toBe(publicPort);
  });

  it("serves nothing on any other socket: no file read, none written", async () => {
    const canaryText = `canary-${Math.random().toString(36).slice(2)}`;
    const canary = { file: path.join(vault.state, "..", "outside-canary.js"), text: canaryText };
    await writeFile(canary.file, `// ${canaryText}\nthrow new Error("x");\n`, { mode: 0o600 });
    const plantedDir = path.join(vault.diskRoot, "planted-by-loopback");
    for (const target of sockets) {
      if (target.kind === "tcp" && target.port === publicPort) continue;
      expect(await attack(target, canary, plantedDir), JSON.stringify(target)).toEqual([]);
    }
    expect(await plantedFiles(vault, plantedDir)).toEqual([]);
    // Through a cap, the same file is reachable: the doors tried above were the only thing refused.
    const diskCap = vault.diskCapUrl.replace(/^https?:\/\/[^/]+/, vault.url);
    expect(await (await fetch(`${diskCap}/file?path=private.txt`)).text()).toBe("host secret");
  });

  it("serves nothing of Miniflare's own on the public port", async () => {
    // The entry worker in front of ours has routes of its own; all but a secret-gated proxy reach the vault's 404.
    for (const p of [
      "/cdn-cgi/platform-proxy",
      "/cdn-cgi/explorer",
      "/cdn-cgi/handler/scheduled",
      "/cdn-cgi/handler/email",
      "/cdn-cgi/mf/reload",
    ]) {
      for (const headers of [{}, { "MF-Op": "GET" }, { "MF-Route-Override": "x" }] as Record<string, string>[]) {
        const res = await fetch(`${vault.url}${p}`, { method: "POST", headers, body: "{}" });
        expect(res.status, `${p} ${JSON.stringify(headers)}`).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }
    }
  });

  it("serves no R2 object at Miniflare's bucket routes, which read a bucket with no cap", async () => {
    // Miniflare's entry worker answers these itself from every local bucket (launcher/sealed-entry.ts).
    const secret = `bucket-secret-${Math.random().toString(36).slice(2)}`;
    const r2Cap = vault.rootCapUrl.replace(/^https?:\/\/[^/]+/, vault.url);
    const written = await fetch(`${r2Cap}/file?path=bucket-door.txt`, { method: "PUT", body: secret });
    expect(written.status).toBe(201);
    for (const route of ["/cdn-cgi/local/r2/public", "/cdn-cgi/local/r2/s3"]) {
      for (const bucket of ["BUCKET", "capvault"]) {
        for (const method of ["GET", "HEAD"]) {
          const res = await fetch(`${vault.url}${route}/${bucket}/default/bucket-door.txt`, { method });
          const body = await res.text();
          expect(res.status, `${method} ${route}/${bucket}`).toBe(404);
          expect(body).not.toContain(secret);
          expect(res.headers.get("access-control-allow-origin")).toBeNull();
        }
      }
    }
    // The same object through the cap: the routes above were the only thing refused.
    expect(await (await fetch(`${r2Cap}/file?path=bucket-door.txt`)).text()).toBe(secret);
  });

  it("keeps the admin token out of every process's environment and command line", async () => {
    const token = vault.adminToken;
    expect(token.length).toBeGreaterThanOrEqual(32);
    const pids = await groupPids(vault.pgid);
    expect(pids.length).toBeGreaterThanOrEqual(2);
    for (const pid of pids) {
      for (const file of ["environ", "cmdline"]) {
        const bytes = await readFile(`/proc/${pid}/${file}`).catch(() => Buffer.alloc(0));
        expect(bytes.includes(Buffer.from(token)), `/proc/${pid}/${file}`).toBe(false);
      }
    }
  });
});
