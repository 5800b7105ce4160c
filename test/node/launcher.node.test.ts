/**
 * `capvault serve` on its own vault (a first start with no admin token, its
 * output, restarts): what it prints, real HTTP, persistence, revocation of
 * transfers in flight, a later start. A start that fails:
 * launcher-start-fails.node.test.ts.
 */
import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { request } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../cli-test-io.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;

beforeAll(async () => {
  vault = await startTestVault({ env: { CAPVAULT_ADMIN_TOKEN: "" } });
});
afterAll(async () => {
  await vault?.stop();
});

const q = (p: string) => `?path=${encodeURIComponent(p)}`;

/** One request on a new connection, never a pooled keep-alive one; resolves to the status. */
function oneShot(method: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

describe("first start", () => {
  it("prints the admin token once, a root cap, and the listening line", async () => {
    const out = vault.output();
    expect(out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).not.toContain("reachable from the network");
    expect(out).toMatch(/^default root cap: http:\/\/127\.0\.0\.1:\d+\/object\/[a-z2-7]{48}$/m);
    expect(out).toMatch(/^disk root cap: /m);
    expect(out).toMatch(/^default console: http:\/\/127\.0\.0\.1:\d+\/ui#[a-z2-7]{48}$/m);
    expect(out).toMatch(
      /^2 root caps exist, not shown again .*; mint another: CAPVAULT_URL=http:\S+ npx capvault mint /m,
    );
    const match = /admin token \(saved in .*, shown once\): (\S+)/.exec(out);
    expect(match).not.toBeNull();
    const saved = (await readFile(path.join(vault.state, "admin-token"), "utf8")).trim();
    expect(saved).toBe(match![1]);
    expect((await stat(path.join(vault.state, "admin-token"))).mode & 0o777).toBe(0o600);
    const res = await fetch(`${vault.url}/admin/roots`, { headers: { authorization: `Bearer ${saved}` } });
    expect(res.status).toBe(200);
  });
});

describe("HOST=0.0.0.0", () => {
  it("prints the address it binds and warns that the vault is reachable from the network", async () => {
    const wide = await startTestVault({ env: { HOST: "0.0.0.0", CAPVAULT_PUBLIC_URL: "http://vault.test:8787" } });
    try {
      const out = wide.output();
      const port = new URL(wide.url).port;
      expect(out).toMatch(new RegExp(`^capvault listening on http://0\\.0\\.0\\.0:${port} `, "m"));
      expect(out).not.toContain("listening on http://127.0.0.1");
      expect(out).toMatch(/^capvault serve: warning: .*reachable from the network$/m);
      // Reached here over loopback only, as every test on this machine.
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(200);
    } finally {
      await wide.stop();
    }
  }, 120_000);
});

describe("over real HTTP", () => {
  it("round-trips 64 MiB with an equal hash, streamed", async () => {
    const size = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31 + 7) & 0xff;
    const sent = createHash("sha256");
    let sentBytes = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sentBytes >= size) return controller.close();
        const piece = Buffer.from(chunk);
        piece[0] = (sentBytes / chunk.length) & 0xff;
        sent.update(piece);
        sentBytes += piece.length;
        controller.enqueue(piece);
      },
    });
    const put = await fetch(`${vault.rootCapUrl}/file${q("big.bin")}`, {
      method: "PUT",
      body,
      headers: { "content-length": String(size) },
      duplex: "half",
    } as RequestInit);
    expect(put.status).toBe(201);
    expect(((await put.json()) as { size: number }).size).toBe(size);

    const got = await fetch(`${vault.rootCapUrl}/file${q("big.bin")}`);
    expect(got.headers.get("content-length")).toBe(String(size));
    const received = createHash("sha256");
    let receivedBytes = 0;
    for await (const piece of got.body as unknown as AsyncIterable<Uint8Array>) {
      received.update(piece);
      receivedBytes += piece.length;
    }
    expect(receivedBytes).toBe(size);
    expect(received.digest("hex")).toBe(sent.digest("hex"));
  }, 120_000);

  it("serves text files byte for byte with Content-Length, even to clients that accept gzip", async () => {
    const text = "compressible ".repeat(200);
    await fetch(`${vault.rootCapUrl}/file${q("notes.txt")}`, {
      method: "PUT",
      body: text,
      headers: { "content-type": "text/plain" },
    });
    const res = await fetch(`${vault.rootCapUrl}/file${q("notes.txt")}`, {
      headers: { "accept-encoding": "gzip, br" },
    });
    expect(res.headers.get("content-encoding")).not.toMatch(/gzip|br/);
    expect(res.headers.get("content-length")).toBe(String(text.length));
    expect(await res.text()).toBe(text);
  });

  it("refuses a body of unknown length with 411 and stores nothing", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${vault.rootCapUrl}/file${q("chunked.txt")}`);
      const req = request(url, { method: "PUT", headers: { "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("part one ");
      req.end("part two");
    });
    expect(status).toBe(411);
    expect((await fetch(`${vault.rootCapUrl}/file${q("chunked.txt")}`)).status).toBe(404);
  });

  it("logs requests without tokens or paths", async () => {
    const logged = () =>
      vault
        .output()
        .split("\n")
        .filter((l) => /^(GET|PUT|POST|DELETE) /.test(l));
    const before = logged().length;
    await fetch(`${vault.rootCapUrl}/file${q("secret-name.txt")}`);
    const token = vault.rootCapUrl.split("/object/")[1]!;
    // Unmatched spellings still carry the token in their URL; the log must not.
    for (const p of [`/Object/${token}`, `/v1/${token}/file`, `/object%2F${token}/file`, `/object/${token}/nope`]) {
      expect((await fetch(`${vault.url}${p}`)).status).toBe(404);
    }
    // One line per request, reaching the launcher's output through workerd's pipe, on a busy machine later
    // than the answer: wait for the five lines (bounded), never for a guessed time.
    for (const started = Date.now(); logged().length < before + 5 && Date.now() - started < 30_000; )
      await new Promise((r) => setTimeout(r, 20));
    const requestLines = logged();
    expect(requestLines.length).toBeGreaterThan(2);
    expect(requestLines.some((l) => /^GET \/object\/\{[a-z2-7]{16}\}\/file 404 \d+ms$/.test(l))).toBe(true);
    expect(requestLines.some((l) => /^GET \(no route\) 404 \d+ms$/.test(l))).toBe(true);
    for (const line of requestLines) {
      expect(line).not.toContain(token);
      expect(line).not.toContain("secret-name");
    }
    // Tokens appear only where the launcher hands out the first root caps: each cap's URL and its console link.
    expect(vault.output().split(token).length - 1).toBe(2);
  });
});

describe("persistence", () => {
  it("keeps caps, files and revocations across a restart, and no token is in the state folder", async () => {
    const admin = (await readFile(path.join(vault.state, "admin-token"), "utf8")).trim();
    const mint = await fetch(`${vault.url}/admin/roots`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ backend: "r2", prefix: "persist/", label: "persist" }),
    });
    const root = (await mint.json()) as { url: string; token: string };
    await fetch(`${root.url}/file${q("memo.md")}`, { method: "PUT", body: "remember me" });
    const sub = (await (
      await fetch(`${root.url}/subdir`, { method: "POST", body: JSON.stringify({ path: "kept" }) })
    ).json()) as { url: string; token: string };
    const gone = (await (
      await fetch(`${root.url}/subdir`, { method: "POST", body: JSON.stringify({ path: "gone" }) })
    ).json()) as { url: string; token: string };
    expect((await fetch(gone.url, { method: "DELETE" })).status).toBe(204);
    // Version history, on both backends, kept in the journal objects the launcher configures.
    for (const capUrl of [root.url, vault.diskCapUrl])
      for (const text of ["v1", "v2"]) await fetch(`${capUrl}/file${q("history.md")}`, { method: "PUT", body: text });

    const firstOutput = vault.output().length;
    const runDirs = async () => (await readdir(vault.tmp)).filter((name) => /^capvault-/.test(name));
    expect(await runDirs()).toHaveLength(1);
    await vault.restart();
    expect(vault.output().slice(firstOutput)).not.toMatch(/root cap:|admin token/);
    // The stopped launcher took its socket folder with it (the new one has its own).
    expect(await runDirs()).toHaveLength(1);

    expect(await (await fetch(`${root.url}/file${q("memo.md")}`)).text()).toBe("remember me");
    expect((await fetch(sub.url)).status).toBe(200);
    for (const capUrl of [root.url, vault.diskCapUrl]) {
      const { versions } = (await (await fetch(`${capUrl}/versions${q("history.md")}`)).json()) as {
        versions: { id: string; operation: string }[];
      };
      expect(versions.map((v) => v.operation)).toEqual(["modified", "created"]);
      expect(await (await fetch(`${capUrl}/versions/${versions[1]!.id}`)).text()).toBe("v1");
    }
    const revoked = await fetch(gone.url);
    expect(revoked.status).toBe(404);
    expect(((await revoked.json()) as { error: { code: string } }).error.code).toBe("no_such_cap");

    const tokens = [
      root.token,
      sub.token,
      gone.token,
      vault.rootCapUrl.split("/object/")[1]!,
      vault.diskCapUrl.split("/object/")[1]!,
    ];
    const files = await filesUnder(vault.state);
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const bytes = await readFile(file);
      for (const token of tokens)
        expect(bytes.includes(Buffer.from(token)), `${path.relative(vault.state, file)} holds a token`).toBe(false);
    }
  }, 120_000);
});

describe("revocation against transfers in flight", () => {
  // The invariant: once a revocation has answered, nothing lands through the
  // cap. A write whose bytes were all stored before the revocation answered
  // is linearised before it; one still streaming is cut and stores nothing.
  // (Which of the two happens depends on timing: Miniflare can hold the
  // DELETE back until a fast upload is done.)
  it("a write still streaming when its cap is revoked lands nowhere", async () => {
    for (const [backend, rootUrl] of [
      ["r2", vault.rootCapUrl],
      ["disk", vault.diskCapUrl],
    ] as const) {
      const sub = (await (
        await fetch(`${rootUrl}/subdir`, { method: "POST", body: JSON.stringify({ path: "inflight" }) })
      ).json()) as { url: string };
      const size = 32 * 1024 * 1024;
      const piece = new Uint8Array(256 * 1024).fill(1);
      let sent = 0;
      // What the root sees at the file's path as soon as the revocation has answered.
      let revoking: Promise<number> | null = null;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (sent >= size) return c.close();
          // Revoke once 4 MiB are on their way, then keep sending, slowly.
          // On a connection of its own: a pooled idle one may be closing under it.
          if (sent === 4 * 1024 * 1024)
            revoking = oneShot("DELETE", sub.url).then((status) => {
              expect(status).toBe(204);
              return oneShot("GET", `${rootUrl}/stat?path=inflight/late.bin`);
            });
          if (revoking) await new Promise((r) => setTimeout(r, 5));
          sent += piece.length;
          c.enqueue(piece);
        },
      });
      const put = await fetch(`${sub.url}/file?path=late.bin`, {
        method: "PUT",
        body,
        headers: { "content-length": String(size) },
        duplex: "half",
      } as RequestInit).catch(() => null);
      expect(revoking).not.toBeNull();
      const statWhenRevoked = await revoking!;
      const stat = await fetch(`${rootUrl}/stat?path=inflight/late.bin`);
      if (put?.status === 201) {
        // Stored before the revocation answered: allowed, and only then. Asked of the vault (the file was
        // there when the revocation answered), not of this process's clock: the two answers come on two
        // connections, and on a loaded machine the 201 can be read well after the 204 that followed it.
        expect(statWhenRevoked, backend).toBe(200);
        expect(stat.status).toBe(200);
      } else {
        if (put) {
          expect(put.status).toBe(404);
          // The vault answers before the body has all arrived and then closes the
          // connection; the client, still sending, may see its read of that answer
          // cut (ECONNRESET). The status has arrived whole either way.
          const answer = (await put.json().catch(() => null)) as { error: { code: string } } | null;
          if (answer) expect(answer.error.code).toBe("no_such_cap");
        }
        expect(stat.status).toBe(404);
      }
    }
  }, 60_000);
});

describe("a later start", () => {
  it("says how many roots exist and the one command that mints another, and mints a disk root once the folder is named", async () => {
    const saved = (await readFile(path.join(vault.state, "admin-token"), "utf8")).trim();
    const admin = { authorization: `Bearer ${saved}` };
    const roots = async () =>
      (
        (await (await fetch(`${vault.url}/admin/roots`, { headers: admin })).json()) as {
          roots: { id: string; backend: string }[];
        }
      ).roots;
    // As if the earlier starts had been given no CAPVAULT_DISK_ROOT: no disk root is left.
    for (const root of (await roots()).filter((r) => r.backend === "disk"))
      expect((await fetch(`${vault.url}/admin/roots/${root.id}`, { method: "DELETE", headers: admin })).status).toBe(
        204,
      );
    const count = (await roots()).length;
    const before = vault.output().length;
    await vault.restart();
    const out = vault.output().slice(before);
    expect(out).toMatch(/^disk root cap: http:\/\/127\.0\.0\.1:\d+\/object\/[a-z2-7]{48}$/m);
    expect(out).not.toMatch(/admin token/);
    const line = new RegExp(
      `^${count + 1} root caps exist, not shown again \\(tokens are stored hashed\\); mint another: (CAPVAULT_URL=\\S+) npx capvault (mint default/ --admin-token-file \\S+)$`,
      "m",
    ).exec(out);
    expect(line, out).not.toBeNull();
    expect(line![2]).toContain(path.join(vault.state, "admin-token"));
    // The command works as printed.
    const run = await runInProcess(line![2]!.split(" "), {
      env: { CAPVAULT_URL: line![1]!.slice("CAPVAULT_URL=".length) },
    });
    expect(run.stderr).toMatch(/minted root/);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/object\/[a-z2-7]{48}\n$/);
    expect(await roots()).toHaveLength(count + 2);
    const put = await fetch(`${vault.diskCapUrl}/file${q("new-disk-root.txt")}`, { method: "PUT", body: "here" });
    expect(put.status).toBe(201);
    expect(await readFile(path.join(vault.diskRoot, "new-disk-root.txt"), "utf8")).toBe("here");
  }, 120_000);
});
