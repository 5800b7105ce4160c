/**
 * The SDK's caps against the real launcher (Miniflare): info, subdir,
 * children and revocation, the admin client, watch, and the cap token never
 * appearing in an error. Paths, files and listing are in fs-cap.node.test.ts.
 */
import { inspect } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { AdminClient, FsCap } from "../../clients/typescript/index.ts";
import { type SdkFixture, sdkFixture, sha256, token } from "./fs-cap-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
let t: SdkFixture;
let refusal: SdkFixture["refusal"];

beforeAll(async () => {
  t = await sdkFixture("fs-cap-caps");
  ({ vault, fs, refusal } = t);
});

describe("caps", () => {
  it("info describes the cap and makes String() show the id, never the token", async () => {
    expect(String(fs)).not.toContain(token(fs));
    const info = await fs.info();
    expect(info).toMatchObject({
      rights: ["read", "write", "delete", "list", "subdir"],
      label: "sdk",
      parent: null,
      expiresAt: null,
    });
    expect(typeof info.id).toBe("string");
    expect(Date.parse(info.createdAt)).toBeGreaterThan(0);
    expect(String(fs)).toBe(`FsCap(${info.id})`);
    expect(`${JSON.stringify(fs)} ${inspect(fs)}`).not.toContain(token(fs));
  });

  it("subdir attenuates: fewer rights, bounded expiry, refused escalation", async () => {
    await fs.write("shared/doc.md", "doc");
    const reader = await fs.subdir({ path: "shared", rights: ["read", "list"], ttlSeconds: 600, label: "reader" });
    expect(reader.rights).toEqual(["read", "list"]);
    expect(Date.parse(reader.expiresAt!)).toBeGreaterThan(Date.now());
    expect(reader.url).not.toBe(fs.url);
    expect(await reader.readText("doc.md")).toBe("doc");
    expect(await reader.info()).toMatchObject({
      id: reader.id,
      rights: ["read", "list"],
      label: "reader",
      parent: (await fs.info()).id,
    });

    expect(await refusal(reader.write("doc.md", "pwned"))).toMatchObject({ code: "forbidden", status: 403 });
    expect((await refusal(reader.delete("doc.md"))).code).toBe("forbidden");
    expect((await refusal(reader.subdir({ path: "" }))).code).toBe("forbidden");
    expect((await refusal(fs.subdir({ path: "shared", rights: ["read", "fly" as never] }))).code).toBe("bad_request");

    const narrow = await fs.subdir({ path: "", rights: ["read", "subdir"] });
    expect((await refusal(narrow.subdir({ path: "shared", rights: ["read", "write"] }))).code).toBe("forbidden");
    expect(await fs.readText("shared/doc.md")).toBe("doc");
  });

  it("children follows pages in creation order; childrenPage hands out one page", async () => {
    const parent = await fs.subdir({ path: "", label: "pager" });
    const kids: string[] = [];
    for (let i = 0; i < 5; i++) kids.push((await parent.subdir({ path: "", label: `kid${i}` })).id!);
    expect((await parent.children({ limit: 2 })).map((c) => c.id)).toEqual(kids);
    const first = await parent.childrenPage({ limit: 2 });
    expect(first.children.map((c) => c.id)).toEqual(kids.slice(0, 2));
    const second = await parent.childrenPage({ limit: 2, cursor: first.cursor });
    expect(second.children.map((c) => c.id)).toEqual(kids.slice(2, 4));
    expect((await parent.childrenPage({ limit: 2, cursor: second.cursor })).cursor).toBeNull();
    expect((await refusal(parent.childrenPage({ limit: 0 }))).code).toBe("bad_request");
  });

  it("children, revokeChild and revoke", async () => {
    const parent = await fs.subdir({ path: "family", label: "parent" });
    const a = await parent.subdir({ path: "a", rights: ["read"], label: "child-a" });
    const b = await parent.subdir({ path: "b", label: "child-b" });
    const grandchild = await b.subdir({ path: "deeper" });

    const children = await parent.children();
    expect(children.map((c) => [c.id, c.path, c.label, c.rights]).sort()).toEqual(
      [
        [a.id, "a", "child-a", ["read"]],
        [b.id, "b", "child-b", ["read", "write", "delete", "list", "subdir"]],
      ].sort(),
    );

    await parent.revokeChild(b.id!);
    expect(await refusal(b.info())).toMatchObject({ code: "no_such_cap", status: 404 });
    expect((await refusal(grandchild.stat())).code).toBe("no_such_cap");
    expect((await a.info()).id).toBe(a.id);
    expect((await parent.children()).map((c) => c.id)).toEqual([a.id]);

    expect(await parent.revoke()).toEqual({ complete: true });
    expect((await refusal(parent.info())).code).toBe("no_such_cap");
    expect((await refusal(a.read("x"))).code).toBe("no_such_cap");
    expect((await fs.info()).label).toBe("sdk");
  });

  it("a revoked cap and a never-issued one are indistinguishable", async () => {
    const gone = await fs.subdir({ path: "gone" });
    await gone.revoke();
    const never = new FsCap(`${vault.url}/object/${"a".repeat(48)}`);
    const [e1, e2] = [await refusal(gone.info()), await refusal(never.info())];
    expect([e1.code, e1.status, e1.message]).toEqual([e2.code, e2.status, e2.message]);
  });
});

describe("admin", () => {
  it("mints, lists and revokes roots; a wrong admin token is unauthorized", async () => {
    const admin = new AdminClient(`${vault.url}/`, vault.adminToken);
    const root = await admin.mintRoot({
      backend: "r2",
      prefix: `${t.prefix}admin-test/`,
      rights: ["read", "list"],
      label: "ro",
      ttlSeconds: 3600,
    });
    expect(root.rights).toEqual(["read", "list"]);
    expect(await root.info()).toMatchObject({ label: "ro", rights: ["read", "list"] });
    const roots = await admin.listRoots();
    expect(roots.find((r) => r.id === root.id)).toMatchObject({
      backend: "r2",
      prefix: `${t.prefix}admin-test/`,
      label: "ro",
    });

    expect(await admin.revokeRoot(root.id!)).toEqual({ complete: true });
    expect((await refusal(root.info())).code).toBe("no_such_cap");

    const intruder = new AdminClient(vault.url, "wrong-token");
    expect(await refusal(intruder.listRoots())).toMatchObject({ code: "unauthorized", status: 401 });
    expect((await refusal(intruder.mintRoot({ backend: "r2", prefix: "x/" }))).code).toBe("unauthorized");
    expect((await refusal(admin.mintRoot({ backend: "r2", prefix: "/abs" }))).code).toBe("absolute_path");
  });
});

describe("watch", () => {
  /** The newest version id of the root so far: a watch from it sees exactly what comes after. */
  async function newestVersion(): Promise<string> {
    await fs.write("watch-marker.md", String(Math.random()));
    return (await fs.versions("watch-marker.md", { limit: 1 })).versions[0]!.id;
  }

  it("follows a child's subtree in order, paths relative to it, and ends with no_such_cap on revocation", async () => {
    const child = await fs.subdir({ path: "watched", rights: ["read"] });
    const since = await newestVersion();
    await fs.write("outside.md", "not for the child");
    await fs.write("watched/a.md", "one");
    await fs.write("watched/a.md", "two!");
    await fs.move("watched/a.md", "watched/deep/b.md");
    await fs.delete("watched/deep/b.md");
    const changes = child.watch({ since })[Symbol.asyncIterator]();
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push((await changes.next()).value);
    expect(seen.map((c) => [c.operation, c.path, c.size])).toEqual([
      ["created", "a.md", 3],
      ["modified", "a.md", 4],
      ["moved", "a.md", 4],
      ["created", "deep/b.md", 4],
      ["deleted", "deep/b.md", 4],
    ]);
    expect(seen[0]).toMatchObject({ sha256: sha256("one"), actor: fs.id });
    expect(Number(seen[4].version)).toBeGreaterThan(Number(seen[0].version));

    // Live: a change made after the backlog arrives on the open stream.
    const next = changes.next();
    await fs.write("watched/live.md", "now");
    expect((await next).value).toMatchObject({ operation: "created", path: "live.md" });

    const ended = changes.next();
    await child.revoke();
    expect(await refusal(ended)).toMatchObject({ code: "no_such_cap", status: 404 });
  });

  it("resumes after `since`, never repeating what was seen, and ends quietly on abort", async () => {
    const since = await newestVersion();
    await fs.write("resume/a.md", "1");
    await fs.write("resume/b.md", "2");
    const stop = new AbortController();
    const first = fs.watch({ since, signal: stop.signal })[Symbol.asyncIterator]();
    const a = (await first.next()).value;
    expect(a.path).toBe("resume/a.md");
    stop.abort();
    expect(await first.next()).toEqual({ done: true, value: undefined });

    const again = new AbortController();
    const rest = fs.watch({ since: a.version, signal: again.signal })[Symbol.asyncIterator]();
    expect((await rest.next()).value).toMatchObject({ path: "resume/b.md", operation: "created" });
    const pending = rest.next();
    again.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("a cap without read, a bad since and a revoked cap are refused before any event", async () => {
    const writeOnly = await fs.subdir({ path: "", rights: ["write"] });
    expect(await refusal(writeOnly.watch().next())).toMatchObject({ code: "forbidden" });
    expect(await refusal(fs.watch({ since: "x" }).next())).toMatchObject({ code: "bad_request" });
    await writeOnly.revoke();
    expect(await refusal(writeOnly.watch().next())).toMatchObject({ code: "no_such_cap" });
  });
});

describe("secrecy", () => {
  it("an unreachable vault is unavailable (status 0), token-free", async () => {
    const offline = new FsCap(`http://127.0.0.1:9/object/${token(fs)}`);
    expect(await refusal(offline.read("a"))).toMatchObject({ code: "unavailable", status: 0 });
  });

  it("no error seen in this file mentions a token", () => {
    t.expectNoTokenLeaked(10);
  });
});
