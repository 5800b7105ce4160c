import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { VersionPage } from "../../shared/wire-types.ts";
import { selectStorage } from "../../storage-adapters/select-storage.ts";
import { INLINE_VERSION_MAX, R2_VERSIONS_PREFIX } from "../../storage-adapters/version-blobs.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";
import { history, readVersion, redact, restore, versionsOf } from "./versions-client.ts";

// Every write, move and delete through any cap records a version of the path
// in its root's journal; a cap reads, restores and redacts only versions of
// paths inside its own root. Both backends, through HTTP.

let counter = 0;

async function sha256Hex(bytes: string | Uint8Array): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The journal of a root minted at `prefix`, and the blob behind a version id (internal: never in an answer). */
function journal(backend: "r2" | "disk", prefix: string) {
  return env.JOURNALS.get(env.JOURNALS.idFromName(`${backend}:${prefix}`));
}
async function blobOf(backend: "r2" | "disk", prefix: string, id: string): Promise<string | null> {
  return runInDurableObject(journal(backend, prefix), async (_i, state) => {
    const row = state.storage.sql.exec<{ blob: string | null }>("SELECT blob FROM versions WHERE id = ?", Number(id));
    return row.toArray()[0]?.blob ?? null;
  });
}

/** Whether a blob's bytes are still kept anywhere: in storage, or (small R2 versions) in the journal's own row. */
async function bytesKept(backend: "r2" | "disk", prefix: string, blob: string): Promise<boolean> {
  if ((await selectStorage(env, backend)!.readVersion(blob)).ok) return true;
  return runInDurableObject(journal(backend, prefix), async (_i, state) => {
    const rows = state.storage.sql.exec("SELECT 1 FROM inline_blobs WHERE blob = ?", blob).toArray();
    return rows.length > 0;
  });
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async (extra: Record<string, unknown> = {}) => {
    const prefix = `versions/${backend}/${++counter}/`;
    const minted = await mintRoot(prefix, { backend, ...extra });
    return { root: cap(minted.token), id: minted.id, prefix };
  };

  it("records create, modify, move and delete, newest first, with each version's bytes", async () => {
    const { root, id } = await fresh();
    expect((await root.write("a.txt", "v1")).status).toBe(201);
    expect((await root.write("a.txt", "v22")).status).toBe(200);
    expect((await root.move({ from: "a.txt", to: "b.txt" })).status).toBe(200);
    expect((await root.remove("b.txt")).status).toBe(204);

    const a = await versionsOf(root, "a.txt");
    expect(a.map((v) => [v.operation, v.size, v.actor, v.redacted])).toEqual([
      ["moved", 3, id, false],
      ["modified", 3, id, false],
      ["created", 2, id, false],
    ]);
    expect(a[1]!.sha256).toBe(await sha256Hex("v22"));
    expect(a[2]!.sha256).toBe(await sha256Hex("v1"));
    // Ids increase across the root: a later version has a larger id.
    expect(Number(a[0]!.id)).toBeGreaterThan(Number(a[1]!.id));
    const b = await versionsOf(root, "b.txt");
    expect(b.map((v) => [v.operation, v.size])).toEqual([
      ["deleted", 3],
      ["created", 3],
    ]);
    for (const [version, bytes] of [
      [a[2]!, "v1"],
      [a[1]!, "v22"],
      [b[0]!, "v22"],
    ] as const) {
      const res = await readVersion(root, version.id);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(bytes);
    }
    // History never shows a path: not the root's prefix, not the file's.
    const text = await (await history(root, "a.txt")).text();
    expect(text).not.toContain("versions/");
    expect(text).not.toContain("a.txt");
  });

  it("a deleted file stays restorable: restore writes it back as a new version", async () => {
    const { root } = await fresh();
    await root.write("notes/plan.md", "the plan", { "content-type": "text/markdown" });
    await root.remove("notes/plan.md");
    expect((await root.read("notes/plan.md")).status).toBe(404);
    const [deleted] = await versionsOf(root, "notes/plan.md");
    expect(deleted!.operation).toBe("deleted");

    const res = await restore(root, deleted!.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ size: 8, sha256: await sha256Hex("the plan") });
    const back = await root.read("notes/plan.md");
    expect(await back.text()).toBe("the plan");
    expect(back.headers.get("content-type")).toBe("text/markdown");
    expect((await versionsOf(root, "notes/plan.md")).map((v) => v.operation)).toEqual([
      "created",
      "deleted",
      "created",
    ]);
  });

  it("larger files (streamed, not read whole) keep their old bytes too", async () => {
    const { root } = await fresh();
    const big = new Uint8Array(300 * 1024 + 5).map((_, i) => (i * 7) % 253);
    await root.write("big.bin", big);
    await root.write("big.bin", "small now");
    const [, first] = await versionsOf(root, "big.bin");
    expect(first!.size).toBe(big.length);
    const res = await readVersion(root, first!.id);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(big);
  });

  it("a refused write records no version", async () => {
    const { root } = await fresh();
    await root.write("doc.md", "v1");
    expect((await root.write("doc.md", "v2", { "if-match": '"nope"' })).status).toBe(412);
    expect((await root.write("doc.md/under", "x")).status).toBe(409);
    expect((await versionsOf(root, "doc.md")).length).toBe(1);
    expect(await versionsOf(root, "doc.md/under")).toEqual([]);
  });

  it("redact destroys the bytes for good and keeps the record", async () => {
    const { root, prefix } = await fresh();
    await root.write("s.txt", "the secret");
    await root.write("s.txt", "public");
    const [, secret] = await versionsOf(root, "s.txt");
    const blob = await blobOf(backend, prefix, secret!.id);
    expect(blob).toMatch(/^[0-9a-f]{32}$/);
    expect(await bytesKept(backend, prefix, blob!)).toBe(true);

    expect((await redact(root, secret!.id)).status).toBe(204);
    const after = await versionsOf(root, "s.txt");
    expect(after.map((v) => [v.id, v.operation, v.redacted])).toEqual([
      [after[0]!.id, "modified", false],
      [secret!.id, "created", true],
    ]);
    // Its hash goes with its bytes: it would confirm guesses of a short secret.
    expect(secret!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(after[1]!.sha256).toBeNull();
    // Gone from where they were kept, not only hidden by the journal.
    expect(await bytesKept(backend, prefix, blob!)).toBe(false);
    expect(await errorCode(await readVersion(root, secret!.id))).toBe("not_found");
    expect((await restore(root, secret!.id)).status).toBe(404);
    // Again: nothing left to destroy, still fine.
    expect((await redact(root, secret!.id)).status).toBe(204);
    expect(await (await root.read("s.txt")).text()).toBe("public");
  });

  it("redact destroys the bytes before it answers, even with other blobs waiting to be destroyed", async () => {
    const { root, prefix } = await fresh();
    await root.write("k.txt", "the key");
    await root.write("k.txt", "rotated");
    const [, secret] = await versionsOf(root, "k.txt");
    const blob = (await blobOf(backend, prefix, secret!.id))!;
    // More blobs waiting than one batch destroys (as after a large prune), each named to come first.
    await runInDurableObject(journal(backend, prefix), async (_i, state) => {
      for (let i = 1; i <= 64; i++)
        state.storage.sql.exec("INSERT INTO orphans (blob) VALUES (?)", i.toString(16).padStart(32, "0"));
    });
    expect((await redact(root, secret!.id)).status).toBe(204);
    expect(await bytesKept(backend, prefix, blob)).toBe(false);
  });

  it("a child sees only the history inside its subtree; foreign and malformed ids read as unknown", async () => {
    const { root, id: rootId } = await fresh();
    await root.write("pub/a.txt", "open");
    await root.write("priv/b.txt", "closed");
    const [secret] = await versionsOf(root, "priv/b.txt");
    // history: "all", so the version from before its mint is its to see (history-floor.workers.test.ts).
    const kid = await child(root, { path: "pub", rights: ["read", "write", "delete", "list"], history: "all" });
    await kid.write("a.txt", "open 2");

    const mine = await versionsOf(kid, "a.txt");
    expect(mine.map((v) => [v.operation, v.actor])).toEqual([
      ["modified", kid.minted.id],
      ["created", rootId],
    ]);
    // The parent sees the child's version under its own path.
    expect((await versionsOf(root, "pub/a.txt"))[0]!.actor).toBe(kid.minted.id);

    // Another root's version id, read through this one, is unknown here too.
    const other = await fresh();
    await other.root.write("x.txt", "elsewhere");
    const [foreign] = await versionsOf(other.root, "x.txt");
    const unknown = await (await readVersion(kid, "987654321")).text();
    expect(JSON.parse(unknown).error.code).toBe("not_found");
    for (const bad of [secret!.id, "0", "-1", "1e3", "abc", "00012", "99999999999999999999"]) {
      expect(await (await readVersion(kid, bad)).text()).toBe(unknown);
      expect(await (await restore(kid, bad)).text()).toBe(unknown);
      expect(await (await redact(kid, bad)).text()).toBe(unknown);
    }
    // Ids are per root: this root's ids mean nothing through another root.
    expect(await (await readVersion(other.root, secret!.id)).text()).toBe(unknown);
    expect(await (await readVersion(other.root, foreign!.id)).text()).toContain("elsewhere");
    expect(await errorCode(await history(kid, "../priv/b.txt"))).toBe("path_escapes");
    expect(await (await root.read("priv/b.txt")).text()).toBe("closed");
    expect((await versionsOf(root, "priv/b.txt"))[0]!.redacted).toBe(false);
  });

  it("each route needs its right", async () => {
    const { root } = await fresh();
    await root.write("f.txt", "x");
    const [v] = await versionsOf(root, "f.txt");
    const reader = await child(root, { path: "", rights: ["read"], history: "all" });
    const lister = await child(root, { path: "", rights: ["list"], history: "all" });
    expect(await errorCode(await history(lister, "f.txt"))).toBe("forbidden");
    expect(await errorCode(await readVersion(lister, v!.id))).toBe("forbidden");
    expect(await errorCode(await restore(reader, v!.id))).toBe("forbidden");
    expect(await errorCode(await redact(reader, v!.id))).toBe("forbidden");
    expect((await readVersion(reader, v!.id)).status).toBe(200);
    await reader.revoke();
    expect(await errorCode(await readVersion(reader, v!.id))).toBe("no_such_cap");
  });

  it("pages newest first with a cursor", async () => {
    const { root } = await fresh();
    for (let i = 0; i < 5; i++) await root.write("p.txt", `v${i}`);
    const first = (await (await history(root, "p.txt", "&limit=2")).json()) as VersionPage;
    expect(first.versions.map((v) => v.size)).toEqual([2, 2]);
    const second = (await (await history(root, "p.txt", `&limit=2&cursor=${first.cursor}`)).json()) as VersionPage;
    const third = (await (await history(root, "p.txt", `&limit=2&cursor=${second.cursor}`)).json()) as VersionPage;
    const ids = [...first.versions, ...second.versions, ...third.versions].map((v) => Number(v.id));
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(new Set(ids).size).toBe(5);
    expect(third.cursor).toBeNull();
    expect(await errorCode(await history(root, "p.txt", "&cursor=x"))).toBe("bad_request");
    expect(await errorCode(await history(root, "p.txt", "&limit=101"))).toBe("bad_request");
  });

  it("retention: keepVersions per path, keepDays by the journal's alarm; children inherit it", async () => {
    const { root, prefix } = await fresh({ keepVersions: 2, keepDays: 1 });
    const kid = await child(root, { path: "d" });
    for (let i = 0; i < 4; i++) await kid.write("f.txt", `version ${i}`);
    const kept = await versionsOf(root, "d/f.txt");
    expect(kept.length).toBe(2);
    const dropped = await runInDurableObject(journal(backend, prefix), async (_i, state) => {
      const rows = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM versions").one();
      return rows.n;
    });
    expect(dropped).toBe(2);
    // What a quota would charge: the bytes of the two versions kept ("version 2", "version 3").
    const charged = await runInDurableObject(journal(backend, prefix), async (instance) => instance.keptBytes());
    expect(charged).toBe(18);

    // Two days pass for the journal: the alarm prunes what is older than keepDays.
    await runInDurableObject(journal(backend, prefix), async (_i, state) => {
      state.storage.sql.exec("UPDATE versions SET at = at - ?", 2 * 24 * 3600 * 1000);
    });
    await runDurableObjectAlarm(journal(backend, prefix));
    expect(await versionsOf(root, "d/f.txt")).toEqual([]);
    expect(await (await root.read("d/f.txt")).text()).toBe("version 3");
    const bytes = await runInDurableObject(journal(backend, prefix), async (instance) => instance.keptBytes());
    expect(bytes).toBe(0);

    for (const bad of [{ keepVersions: 0 }, { keepDays: 1.5 }, { keepVersions: "2" }, { keepDays: 99999 }]) {
      const res = await call("POST", "/admin/roots", {
        headers: { authorization: "Bearer test-admin-token" },
        json: { backend, prefix: "versions/bad/", ...bad },
      });
      expect(res.status).toBe(400);
    }
  });

  it("versions are never listed or nameable, even by a root over the whole store", async () => {
    const whole = cap((await mintRoot("", { backend })).token);
    // Over 1 KiB, so R2 keeps the version as a blob too (smaller ones stay in the journal's row).
    await whole.write(`whole-${backend}.txt`, "x".repeat(2048));
    await whole.write(`whole-${backend}.txt`, "y");
    const listed = await (await whole.list("", "&depth=0")).text();
    expect(listed).not.toContain(".capvault");
    for (const path of [".capvault-versions", ".capvault-versions/x", "a/.capvault-versions"]) {
      expect(await errorCode(await whole.read(path))).toBe("invalid_path");
      expect(await errorCode(await whole.stat(path))).toBe("invalid_path");
    }
    const admin = await call("POST", "/admin/roots", {
      headers: { authorization: "Bearer test-admin-token" },
      json: { backend, prefix: ".capvault-versions/" },
    });
    expect(await errorCode(admin)).toBe("invalid_path");
    // The kept bytes exist, as a blob the listing above did not show: this test's own first version's. (Counting
    // every blob in the bucket before and after raced other files' alarms destroying their orphans meanwhile.)
    if (backend === "r2") {
      const first = (await versionsOf(whole, `whole-${backend}.txt`)).at(-1)!;
      const blob = (await blobOf(backend, "", first.id))!;
      expect(await env.BUCKET.head(R2_VERSIONS_PREFIX + blob)).not.toBeNull();
    }
  });
});

describe("an empty R2 version lives in the journal's row (any other is a blob: redaction must destroy it)", () => {
  const r2Blob = async (blob: string) => env.BUCKET.head(R2_VERSIONS_PREFIX + blob);
  const inlineRows = (prefix: string) =>
    runInDurableObject(
      journal("r2", prefix),
      async (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM inline_blobs").one().n,
    );

  it("an empty version puts no blob; one byte more does; both read, restore and prune alike", async () => {
    const prefix = `versions/inline/${++counter}/`;
    const root = cap((await mintRoot(prefix, { backend: "r2", keepVersions: 2 })).token);
    const small = "s".repeat(INLINE_VERSION_MAX);
    const large = "L".repeat(INLINE_VERSION_MAX + 1);
    await root.write("f.txt", small);
    await root.write("f.txt", large);
    const [second, first] = await versionsOf(root, "f.txt");
    const smallBlob = (await blobOf("r2", prefix, first!.id))!;
    const largeBlob = (await blobOf("r2", prefix, second!.id))!;
    expect(await r2Blob(smallBlob)).toBeNull();
    expect(await r2Blob(largeBlob)).not.toBeNull();
    expect(await (await readVersion(root, first!.id)).text()).toBe(small);
    expect(await (await readVersion(root, second!.id)).text()).toBe(large);
    expect((await restore(root, first!.id)).status).toBe(200);
    expect(await (await root.read("f.txt")).text()).toBe(small);
    // keepVersions 2: the first version goes with the restore's row, its bytes with it, and no orphan is left.
    expect((await versionsOf(root, "f.txt")).map((v) => v.id)).not.toContain(first!.id);
    expect(await inlineRows(prefix)).toBe(1);
    const orphans = await runInDurableObject(journal("r2", prefix), async (_i, state) =>
      state.storage.sql.exec("SELECT blob FROM orphans").toArray(),
    );
    expect(orphans).toEqual([]);
  });

  it("a write refused at its put keeps no bytes in the journal", async () => {
    const prefix = `versions/inline/${++counter}/`;
    const root = cap((await mintRoot(prefix, { backend: "r2" })).token);
    await root.write("g.txt", "");
    expect((await root.write("g.txt", "", { "if-none-match": "*" })).status).toBe(412);
    expect(await inlineRows(prefix)).toBe(1);
    expect((await versionsOf(root, "g.txt")).length).toBe(1);
  });
});
