/**
 * WebDAV per cap (issue 26) against the real launcher, with clients nobody
 * here wrote: Debian's `litmus` (the compliance suite) and `rclone` (its
 * WebDAV backend, credentials in its environment), on R2 and disk; and
 * hostile requests: XML bombs, deep and huge bodies, Destinations outside
 * the cap, Depth infinity, lock floods, read-only and revoked caps.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestVault, type TestVault } from "./test-vault.ts";

const PREFIX = "dav-secret-prefix/";
const has = (bin: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${bin}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
const HAVE_LITMUS = has("litmus");
const HAVE_RCLONE = has("rclone");
if (!HAVE_LITMUS) console.warn("webdav: litmus is not installed (apt-get install litmus): its suites are skipped");
if (!HAVE_RCLONE) console.warn("webdav: rclone is not installed (apt-get install rclone): its round trip is skipped");

let vault: TestVault;
let work: string;
const caps: Record<"r2" | "disk", string> = { r2: "", disk: "" };
/** Every response body seen, checked at the end for the root prefix and host paths. */
const seen: string[] = [];

beforeAll(async () => {
  vault = await startTestVault();
  work = await mkdtemp(path.join(os.tmpdir(), "capvault-dav-"));
  const response = await fetch(`${vault.url}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${vault.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ backend: "r2", prefix: PREFIX, label: "dav" }),
  });
  expect(response.status).toBe(201);
  caps.r2 = ((await response.json()) as { url: string }).url;
  caps.disk = vault.diskCapUrl;
}, 90_000);

afterAll(async () => {
  await vault?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function dav(url: string, method: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const response = await fetch(url, { method, headers: init.headers, body: init.body });
  const text = await response.text();
  seen.push(text, JSON.stringify([...response.headers]));
  expect(response.status, `${method} ${text}`).toBeLessThan(500 + (response.status === 507 ? 100 : 0));
  return { status: response.status, text, headers: response.headers };
}

function run(
  bin: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: { ...process.env, ...options.env } });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => resolve({ code, out }));
    child.stdin.end(options.input ?? "");
  });
}

const LOCK_BODY =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>' +
  "<D:locktype><D:write/></D:locktype><D:owner>flood</D:owner></D:lockinfo>";
const tokenOf = (capUrl: string) => capUrl.slice(capUrl.lastIndexOf("/") + 1);
const NS = "urn:capvault-test:";
const patchBody = (props: Record<string, string>, remove: string[] = []) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:t="${NS}">` +
  (Object.keys(props).length === 0
    ? ""
    : `<D:set><D:prop>${Object.entries(props)
        .map(([name, value]) => `<t:${name}>${value}</t:${name}>`)
        .join("")}</D:prop></D:set>`) +
  (remove.length === 0 ? "" : `<D:remove><D:prop>${remove.map((n) => `<t:${n}/>`).join("")}</D:prop></D:remove>`) +
  "</D:propertyupdate>";
const propfindBody = (...names: string[]) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>${names.map((n) => `<${n} xmlns="${NS}"/>`).join("")}</D:prop></D:propfind>`;

// The backends' tests run side by side: each uses its own folders, and the lock flood its own cap.
describe.concurrent("WebDAV", () => {
  describe.each(["r2", "disk"] as const)("on %s", (backend) => {
    it.skipIf(!HAVE_LITMUS)(
      "passes litmus basic, copymove, props and locks, every test",
      async () => {
        const cwd = path.join(work, `litmus-${backend}`);
        await mkdir(cwd);
        const { out } = await run("litmus", ["-k", `${caps[backend]}/dav/`], {
          cwd,
          env: { TESTS: "basic copymove props locks" },
        });
        let suite = "";
        const failed: string[] = [];
        const summaries: string[] = [];
        for (const line of out.split("\n")) {
          const start = /^-> running `(\w+)'/.exec(line);
          if (start) suite = start[1]!;
          const fail = /^\s*\d+\.\s+(\w+)\.+ FAIL/.exec(line.replace(/^.*?(\s*\d+\.\s+\w+\.+ FAIL)/, "$1"));
          if (fail) failed.push(`${suite}/${fail[1]}`);
          if (/^<- summary/.test(line)) summaries.push(line);
        }
        expect(summaries, out).toHaveLength(4);
        expect(failed, out).toEqual([]);
        expect(
          summaries.every((s) => / 0 failed/.test(s) && !/skipped/.test(s)),
          out,
        ).toBe(true);
        seen.push(await readFile(path.join(cwd, "debug.log"), "utf8"));
      },
      90_000,
    );

    it.skipIf(!HAVE_RCLONE)(
      "round-trips a 40-file tree with rclone: copy up, lsf, check, copy down, delete, purge",
      async () => {
        const local = path.join(work, `tree-${backend}`);
        const back = path.join(work, `back-${backend}`);
        for (let d = 0; d < 5; d++) {
          await mkdir(path.join(local, `dir ${d}`, "sub"), { recursive: true });
          for (let f = 0; f < 8; f++) {
            const where = f % 2 === 0 ? `dir ${d}` : path.join(`dir ${d}`, "sub");
            await writeFile(path.join(local, where, `file-${f}€.txt`), `file ${d}/${f}\n`.repeat(f + 1));
          }
        }
        // The token never goes on a command line: rclone reads the remote, password included, from its environment.
        const obscured = await run("rclone", ["obscure", "-"], { input: tokenOf(caps[backend]) });
        expect(obscured.code, obscured.out).toBe(0);
        const env = {
          RCLONE_CONFIG_CV_TYPE: "webdav",
          RCLONE_CONFIG_CV_URL: `${vault.url}/dav/`,
          RCLONE_CONFIG_CV_VENDOR: "other",
          RCLONE_CONFIG_CV_USER: "anyone",
          RCLONE_CONFIG_CV_PASS: obscured.out.trim(),
          RCLONE_CONFIG_DIR: work,
        };
        const rclone = async (...args: string[]) => {
          const result = await run("rclone", [...args, "--config", "/dev/null", "--low-level-retries", "1"], { env });
          expect(result.code, `rclone ${args.join(" ")}\n${result.out}`).toBe(0);
          return result.out;
        };
        await rclone("copy", local, "cv:tree");
        const listed = (await rclone("lsf", "-R", "--files-only", "cv:tree")).trim().split("\n");
        expect(listed).toHaveLength(40);
        await rclone("check", local, "cv:tree");
        await rclone("copy", "cv:tree", back);
        await rclone("check", local, back);
        await rclone("delete", "cv:tree/dir 0");
        expect((await rclone("lsf", "-R", "--files-only", "cv:tree/dir 0")).trim()).toBe("");
        await rclone("purge", "cv:tree/dir 1");
        const top = (await rclone("lsf", "cv:tree")).trim().split("\n");
        expect(top).not.toContain("dir 1/");
        expect(top).toContain("dir 2/");
      },
      90_000,
    );

    it("refuses hostile requests with clear 4xx codes and changes nothing", async () => {
      // A same-root child of its own, so what these requests would change is its own.
      const minted = await fetch(`${caps[backend]}/subdir`, { method: "POST" });
      expect(minted.status).toBe(201);
      const cap = ((await minted.json()) as { url: string }).url;
      const base = `${cap}/dav`;
      expect((await dav(`${base}/h/`, "MKCOL")).status).toBe(201);
      expect((await dav(`${base}/h/keep.txt`, "PUT", { body: "kept" })).status).toBe(201);

      const bomb =
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>' +
        '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag>&lol2;</D:getetag></D:prop></D:propfind>';
      const bombed = await dav(`${base}/h/`, "PROPFIND", { headers: { depth: "0" }, body: bomb });
      expect([bombed.status, JSON.parse(bombed.text).error.code]).toEqual([400, "bad_request"]);
      const external = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>';
      expect((await dav(`${base}/h/`, "PROPFIND", { headers: { depth: "0" }, body: external })).status).toBe(400);
      const deep = `<D:propfind xmlns:D="DAV:">${"<D:prop>".repeat(200)}${"</D:prop>".repeat(200)}</D:propfind>`;
      expect((await dav(`${base}/h/`, "PROPFIND", { headers: { depth: "0" }, body: deep })).status).toBe(400);
      const huge = `<D:propfind xmlns:D="DAV:"><D:prop>${"<D:getetag/>".repeat(200_000)}</D:prop></D:propfind>`;
      expect((await dav(`${base}/h/`, "PROPFIND", { headers: { depth: "0" }, body: huge })).status).toBe(413);

      const infinite = await dav(`${base}/`, "PROPFIND", { headers: { depth: "infinity" } });
      expect(infinite.status).toBe(403);
      expect(infinite.text).toContain("propfind-finite-depth");
      expect((await dav(`${base}/`, "PROPFIND")).status).toBe(403);

      // Destinations outside the cap: another cap's URL, another host, climbing out, encoded climbing.
      const other = backend === "r2" ? caps.disk : caps.r2;
      const outside = [
        `${other}/dav/stolen.txt`,
        `http://elsewhere.example/object/${tokenOf(cap)}/dav/x.txt`,
        `${caps[backend]}/dav/parent.txt`,
        `${base}/../../x.txt`,
        `${base}/%2e%2e/%2e%2e/x.txt`,
        `/object/${tokenOf(other)}/dav/x.txt`,
        `${vault.url}/dav/x.txt`,
      ];
      for (const destination of outside) {
        for (const method of ["COPY", "MOVE"]) {
          const r = await dav(`${base}/h/keep.txt`, method, { headers: { destination } });
          expect([destination, r.status]).toEqual([destination, 403]);
        }
      }
      expect((await dav(`${base}/h/keep.txt`, "COPY", { headers: { destination: `${base}/h/%2Fx` } })).status).toBe(
        400,
      );
      expect((await dav(`${base}/h/keep.txt`, "GET")).text).toBe("kept");
      expect((await dav(`${other}/dav/stolen.txt`, "GET")).status).toBe(404);
      // Onto a folder that holds the source (its parent): overwriting it would delete the source first.
      for (const method of ["COPY", "MOVE"]) {
        const onParent = await dav(`${base}/h/keep.txt`, method, {
          headers: { destination: `${base}/h`, overwrite: "T" },
        });
        expect([method, onParent.status]).toEqual([method, 403]);
      }
      expect((await dav(`${base}/h/keep.txt`, "GET")).text).toBe("kept");
      expect((await dav(`${base}/h/..%2F..%2Fx`, "PUT", { body: "x" })).status).toBe(400);
    }, 60_000);

    it("bounds a cap's locks: the 65th is refused, a lock holds its file and folder, unlocking frees room", async () => {
      // A same-root child of its own, so the flood fills its locks and not litmus's cap's; a folder of its own in the root.
      const minted = await fetch(`${caps[backend]}/subdir`, { method: "POST" });
      expect(minted.status).toBe(201);
      const base = `${((await minted.json()) as { url: string }).url}/dav`;
      expect((await dav(`${base}/locks/`, "MKCOL")).status).toBe(201);
      // A lock flood: the cap holds at most 64 locks; the 65th is refused, and unlocking frees room.
      const locks: string[] = [];
      const lockBody = LOCK_BODY;
      for (let i = 0; i < 64; i++) {
        const r = await dav(`${base}/locks/l${i}`, "LOCK", {
          headers: { timeout: "Infinite", depth: "0" },
          body: lockBody,
        });
        expect(r.status).toBe(201);
        expect(r.text).toContain("<D:timeout>Second-3600</D:timeout>");
        locks.push(r.headers.get("lock-token")!);
      }
      const flood = await dav(`${base}/locks/one-more`, "LOCK", { body: lockBody });
      expect([flood.status, JSON.parse(flood.text).error.code]).toEqual([413, "too_large"]);
      expect((await dav(`${base}/locks/l0`, "PUT", { body: "no token" })).status).toBe(423);
      expect((await dav(`${base}/locks/l0`, "PUT", { body: "token", headers: { if: `(${locks[0]})` } })).status).toBe(
        204,
      );
      // A locked file below a folder stops the folder's delete and move.
      expect((await dav(`${base}/locks/`, "DELETE")).status).toBe(423);
      for (const token of locks)
        expect(
          (await dav(`${base}/locks/l${locks.indexOf(token)}`, "UNLOCK", { headers: { "lock-token": token } })).status,
        ).toBe(204);
      expect((await dav(`${base}/locks/`, "DELETE")).status).toBe(204);
      expect((await dav(`${base}/locks/`, "PROPFIND", { headers: { depth: "0" } })).status).toBe(404);
    }, 60_000);

    it("keeps dead properties bounded: all or nothing per PROPPATCH, never a 5xx", async () => {
      // A cap of its own, so these properties are not the ones litmus sets.
      const minted = await fetch(`${caps[backend]}/subdir`, { method: "POST" });
      const cap = ((await minted.json()) as { url: string }).url;
      const base = `${cap}/dav`;
      expect((await dav(`${base}/p/`, "MKCOL")).status).toBe(201);
      expect((await dav(`${base}/p/a.txt`, "PUT", { body: "a" })).status).toBe(201);
      const set = await dav(`${base}/p/a.txt`, "PROPPATCH", {
        body: patchBody({ colour: '<x:v xmlns:x="urn:v">b&amp;w</x:v>', size: "3" }),
      });
      expect([set.status, set.text]).toEqual([207, expect.stringContaining("200 OK")]);
      // COPY copies them (RFC 4918 §9.8.2), with their value's namespace; DELETE drops them with the resource.
      expect((await dav(`${base}/p/a.txt`, "COPY", { headers: { destination: `${base}/p/b.txt` } })).status).toBe(201);
      const copied = await dav(`${base}/p/b.txt`, "PROPFIND", {
        headers: { depth: "0" },
        body: propfindBody("colour"),
      });
      expect(copied.text).toContain(`<colour xmlns="${NS}"><v xmlns="urn:v">b&amp;w</v></colour>`);
      expect((await dav(`${base}/p/b.txt`, "DELETE")).status).toBe(204);
      expect((await dav(`${base}/p/b.txt`, "PUT", { body: "b" })).status).toBe(201);
      const fresh = await dav(`${base}/p/b.txt`, "PROPFIND", { headers: { depth: "0" }, body: propfindBody("colour") });
      expect(fresh.text).toContain("404 Not Found");
      expect(fresh.text).not.toContain("b&amp;w");

      // Past 32 properties on one resource: the 33rd is 507, the rest 424, and nothing changed.
      const many = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`p${i}`, "v"]));
      const over = await dav(`${base}/p/a.txt`, "PROPPATCH", { body: patchBody(many, ["size"]) });
      expect(over.status).toBe(207);
      expect(over.text).toContain("507 Insufficient Storage");
      expect(over.text).toContain("424 Failed Dependency");
      const kept = await dav(`${base}/p/a.txt`, "PROPFIND", {
        headers: { depth: "0" },
        body: propfindBody("size", "p0"),
      });
      expect(kept.text).toContain(`<size xmlns="${NS}">3</size>`);
      expect(kept.text).toMatch(/<p0 xmlns="[^"]+"\/><\/D:prop><D:status>HTTP\/1.1 404/);
      // Live properties cannot be set: 403 for them, 424 for the rest.
      const live = await dav(`${base}/p/a.txt`, "PROPPATCH", {
        body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:getetag>x</D:getetag><D:displayname>n</D:displayname></D:prop></D:set></D:propertyupdate>`,
      });
      expect([live.status, live.text]).toEqual([207, expect.stringContaining("403 Forbidden")]);
      expect(live.text).toContain("424 Failed Dependency");

      // The flood past the cap's 16 MiB of properties: test/workers/dav-props-flood.workers.test.ts.

      // A locked resource's properties need its token (423 without), and a read-only cap cannot patch (403).
      const lock = await dav(`${base}/p/a.txt`, "LOCK", { headers: { depth: "0" }, body: LOCK_BODY });
      const token = lock.headers.get("lock-token")!;
      expect((await dav(`${base}/p/a.txt`, "PROPPATCH", { body: patchBody({ z: "1" }) })).status).toBe(423);
      const owned = await dav(`${base}/p/a.txt`, "PROPPATCH", {
        headers: { if: `(${token})` },
        body: patchBody({ z: "1" }),
      });
      expect(owned.text).toContain("200 OK");
      const ro = await fetch(`${cap}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "p", rights: ["read", "list"] }),
      });
      const roUrl = ((await ro.json()) as { url: string }).url;
      expect((await dav(`${roUrl}/dav/b.txt`, "PROPPATCH", { body: patchBody({ z: "1" }) })).status).toBe(403);
    }, 60_000);

    it("serves a read-only child read-only, Basic credentials at /dav/, and ends with revocation", async () => {
      const base = `${caps[backend]}/dav`;
      expect((await dav(`${base}/ro/`, "MKCOL")).status).toBe(201);
      expect((await dav(`${base}/ro/a.txt`, "PUT", { body: "0123456789" })).status).toBe(201);
      const minted = await fetch(`${caps[backend]}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "ro", rights: ["read", "list"] }),
      });
      expect(minted.status).toBe(201);
      const child = ((await minted.json()) as { url: string; token: string }).token;
      const basic = (token: string) => ({ authorization: `Basic ${btoa(`whoever:${token}`)}` });
      const at = `${vault.url}/dav`;

      const listing = await dav(`${at}/`, "PROPFIND", { headers: { ...basic(child), depth: "1" } });
      expect(listing.status).toBe(207);
      expect(listing.text).toContain("<D:href>/dav/a.txt</D:href>");
      const ranged = await dav(`${at}/a.txt`, "GET", { headers: { ...basic(child), range: "bytes=2-4" } });
      expect([ranged.status, ranged.text]).toEqual([206, "234"]);
      for (const [method, url] of [
        ["PUT", `${at}/b.txt`],
        ["DELETE", `${at}/a.txt`],
        ["MKCOL", `${at}/new/`],
        ["MOVE", `${at}/a.txt`],
        ["LOCK", `${at}/a.txt`],
      ] as const) {
        const r = await dav(url, method, {
          headers: { ...basic(child), destination: `${at}/c.txt` },
          body: method === "PUT" ? "x" : method === "LOCK" ? LOCK_BODY : undefined,
        });
        expect([method, r.status]).toEqual([method, 403]);
      }

      const absent = await dav(`${at}/`, "PROPFIND", { headers: { depth: "0" } });
      expect(absent.status).toBe(401);
      expect(absent.headers.get("www-authenticate")).toBe('Basic realm="capvault"');
      const wrong = await dav(`${at}/`, "PROPFIND", { headers: { ...basic("not-a-token"), depth: "0" } });
      expect([wrong.status, wrong.text]).toEqual([401, absent.text]);

      expect((await fetch(`${vault.url}/object/${child}`, { method: "DELETE" })).status).toBeLessThan(300);
      const revoked = await dav(`${at}/a.txt`, "GET", { headers: basic(child) });
      expect([revoked.status, revoked.text, revoked.headers.get("www-authenticate")]).toEqual([
        401,
        absent.text,
        'Basic realm="capvault"',
      ]);
      expect((await dav(`${vault.url}/object/${child}/dav/a.txt`, "GET")).status).toBe(404);
    }, 30_000);
  });
});

describe("WebDAV answers", () => {
  it("never name the root prefix or a host path", () => {
    const all = seen.join("\n");
    expect(all).not.toContain(PREFIX);
    expect(all).not.toContain(vault.diskRoot);
  });
});
