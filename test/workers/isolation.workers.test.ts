import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN, call, cap, child, errorCode, mintRoot } from "./vault.ts";

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  describe("isolation between roots that share a string prefix", () => {
    it("t/alice never sees t/alice_evil (CVE-2025-53110's shape), nor the reverse", async () => {
      const alice = cap((await mintRoot("t/alice", { backend })).token);
      const evil = cap((await mintRoot("t/alice_evil", { backend })).token);
      await alice.write("diary.txt", "alice's secret");
      await alice.write("shared/name", "alice");
      await evil.write("loot.txt", "evil's file");
      await evil.write("shared/name", "evil");

      expect(await errorCode(await alice.read("loot.txt"))).toBe("not_found");
      expect(await errorCode(await evil.read("diary.txt"))).toBe("not_found");
      expect(await errorCode(await alice.stat("loot.txt"))).toBe("not_found");
      expect(await (await alice.read("shared/name")).text()).toBe("alice");
      expect(await (await evil.read("shared/name")).text()).toBe("evil");
      const names = async (c: ReturnType<typeof cap>, path = "") =>
        ((await (await c.list(path)).json()) as { entries: { name: string }[] }).entries.map((e) => e.name);
      expect(await names(alice)).toEqual(["diary.txt", "shared"]);
      expect(await names(evil)).toEqual(["loot.txt", "shared"]);
      // Subdirs of alice with names that extend hers reach nothing of evil's.
      const sub = await child(alice, { path: "shared" });
      expect(await names(sub)).toEqual(["name"]);
      expect(await errorCode(await sub.read("../loot.txt"))).toBe("path_escapes");
    });

    it("a root minted as `t/alice` and one as `t/alice/` are the same folder, `t/alic` is another", async () => {
      const a = cap((await mintRoot("iso2/alice/", { backend })).token);
      const b = cap((await mintRoot("iso2/alice", { backend })).token);
      const c = cap((await mintRoot("iso2/alic", { backend })).token);
      await a.write("x", "1");
      expect(await (await b.read("x")).text()).toBe("1");
      expect(await errorCode(await c.read("x"))).toBe("not_found");
      expect(((await (await c.list()).json()) as { entries: unknown[] }).entries).toEqual([]);
    });
  });

  describe("no response reveals the root prefix", () => {
    it("exercises every route, success and error, and finds the prefix nowhere", async () => {
      const prefix = "zq-hidden-prefix-7731";
      const minted = await mintRoot(`${prefix}/`, { backend });
      const fs = cap(minted.token);
      const responses: Response[] = [];
      const keep = async (p: Promise<Response>) => {
        const res = await p;
        responses.push(res);
        return res;
      };
      await keep(fs.info());
      await keep(fs.write("a/b.txt", "hello"));
      await keep(fs.write("a/b.txt", "again", { "if-none-match": "*" }));
      await keep(fs.write("a/b.txt/c", "x"));
      await keep(fs.write("a", "x"));
      await keep(fs.read("a/b.txt"));
      await keep(fs.read("a/b.txt", { range: "bytes=1-2" }));
      await keep(fs.read("a/b.txt", { range: "bytes=100-" }));
      await keep(fs.read("missing"));
      await keep(fs.read("a"));
      await keep(fs.read("../../etc/passwd"));
      await keep(fs.read("/etc/passwd"));
      await keep(fs.read("a//b"));
      await keep(fs.read("x".repeat(1100)));
      await keep(fs.stat(""));
      await keep(fs.stat("a"));
      await keep(fs.stat("a/b.txt"));
      await keep(fs.stat("nope"));
      await keep(fs.list(""));
      await keep(fs.list("a"));
      await keep(fs.list("a/b.txt"));
      await keep(fs.list("", "&limit=1"));
      await keep(fs.list("", "&cursor=!!"));
      await keep(fs.move({ from: "a/b.txt", to: "c.txt" }));
      await keep(fs.move({ from: "nope", to: "d" }));
      await keep(fs.remove("c.txt"));
      await keep(fs.remove("c.txt"));
      const sub = await keep(fs.subdir({ path: "s", label: "sub" }));
      const subToken = ((await sub.clone().json()) as { token: string }).token;
      await keep(fs.subdir({ path: "s", rights: ["admin"] }));
      await keep(fs.children());
      await keep(cap(subToken).info());
      await keep(cap(subToken).write("deep/file", "x"));
      await keep(cap(subToken).list());
      await keep(cap(subToken).read("../../x"));
      await keep(fs.revokeChild("nope"));
      await keep(fs.revokeChild(((await sub.clone().json()) as { id: string }).id));
      // Versions: a history, a version's bytes, a restore, a redaction, and refusals of each.
      const base = `/object/${minted.token}`;
      const history = await keep(call("GET", `${base}/versions?path=a/b.txt`));
      const { versions } = (await history.clone().json()) as { versions: { id: string }[] };
      await keep(call("GET", `${base}/versions/${versions.at(-1)!.id}`));
      await keep(call("POST", `${base}/versions/${versions.at(-1)!.id}/restore`));
      await keep(call("POST", `${base}/versions/${versions.at(-1)!.id}/redact`));
      await keep(call("GET", `${base}/versions/${versions.at(-1)!.id}`));
      await keep(call("GET", `${base}/versions/999999`));
      await keep(call("GET", `${base}/versions?path=../x`));
      await keep(call("GET", `${base}/versions?path=a/b.txt&cursor=!`));
      await keep(call("GET", "/admin/nope", { headers: { authorization: `Bearer ${ADMIN}` } }));
      await keep(call("GET", "/nope"));
      await keep(fs.revoke());
      await keep(fs.read("a"));

      expect(responses.length).toBeGreaterThan(35);
      const statuses = new Set(responses.map((r) => r.status));
      for (const s of [200, 201, 204, 206, 400, 404, 409, 412, 416]) expect(statuses).toContain(s);
      for (const res of responses) {
        const text = `${[...res.headers].join("\n")}\n${await res.text()}`;
        expect(text).not.toContain(prefix);
        expect(text.toLowerCase()).not.toContain("capvault/");
        // Nor a host path of the disk backend.
        expect(text).not.toContain((env as unknown as { TEST_DISK_ROOT: string }).TEST_DISK_ROOT);
        expect(text).not.toMatch(/\/tmp\/|\.capvault-/);
      }
    });
  });
});
