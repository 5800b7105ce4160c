/**
 * The declared state format (shared/state-format.ts, durable-objects/state-migrations.ts):
 * every Durable Object migrates its own storage when it wakes, atomically,
 * refuses state of a newer format without writing to it, and an object with
 * nothing in it (never minted, or revoked) stays empty.
 *
 * A wake is the object's constructor; a second instance built on the same
 * storage (`new CapObject(state, env)`) runs exactly what a restarted object runs.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CAP_MIGRATIONS } from "../../durable-objects/cap-migrations.ts";
import { CapObject } from "../../durable-objects/cap-object.ts";
import { TOMBSTONE } from "../../durable-objects/cap-record.ts";
import { CHILD_COUNT } from "../../durable-objects/child-index.ts";
import { JOURNAL_MIGRATIONS } from "../../durable-objects/journal-migrations.ts";
import { RootJournal } from "../../durable-objects/root-journal.ts";
import { RootRegistry } from "../../durable-objects/root-registry.ts";
import {
  FORMAT_TABLE,
  type Migration,
  migrateOnWake,
  stampFormat,
  storedFormat,
} from "../../durable-objects/state-migrations.ts";
import { FORMAT_FILE_NAME, RELEASE, STATE_FORMAT } from "../../shared/state-format.ts";
import { checkR2Format, forgetR2FormatCheck } from "../../storage-adapters/r2-format.ts";
import { capObject } from "./slow-upload.ts";
import { cap, errorCode, mintRoot } from "./vault.ts";

/** Every key and every table's rows of an object: what "changed nothing" compares. */
function dump(storage: DurableObjectStorage): unknown {
  const kv = [...storage.kv.list()];
  const tables = storage.sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' ORDER BY name",
    )
    .toArray()
    .map(({ name }) => [name, storage.sql.exec(`SELECT * FROM "${name}"`).toArray()]);
  return { kv, tables };
}

const userTables = (storage: DurableObjectStorage) =>
  storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .toArray()
    .map((r) => r.name)
    .filter((n) => !/^(_cf_|sqlite_)/.test(n));

describe("state format: stamps", () => {
  it(`a new cap's object is stamped format ${STATE_FORMAT} by its mint, and so are the registry and its journal`, async () => {
    const root = await mintRoot(`format/${crypto.randomUUID()}/`);
    expect((await cap(root.token).write("a.md", "x")).status).toBe(201);
    await runInDurableObject(await capObject(root.token), (_i, state) => {
      expect(storedFormat(state.storage, "cap")).toBe(STATE_FORMAT);
    });
    await runInDurableObject(env.ROOTS.get(env.ROOTS.idFromName("registry")), (_i, state) => {
      expect(storedFormat(state.storage, "registry")).toBe(STATE_FORMAT);
    });
  });

  it("an object no cap was ever minted in stays empty after it is asked (no stamp, no table)", async () => {
    const key = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const stub = env.CAPS.get(env.CAPS.idFromName(key));
    expect(await stub.describe()).toMatchObject({ ok: false, error: { code: "no_such_cap" } });
    await runInDurableObject(stub, (_i, state) => {
      expect(userTables(state.storage)).toEqual([]);
      expect([...state.storage.kv.list()]).toEqual([]);
    });
  });

  it("a revoked leaf leaves its object empty, its stamp gone with it", async () => {
    const root = await mintRoot(`format/${crypto.randomUUID()}/`);
    const res = await cap(root.token).subdir({ path: "kid" });
    const kid = (await res.json()) as { token: string };
    expect((await cap(kid.token).revoke()).status).toBe(204);
    await runInDurableObject(await capObject(kid.token), (_i, state) => {
      expect(userTables(state.storage)).toEqual([]);
      expect([...state.storage.kv.list()]).toEqual([]);
    });
  });
});

describe("state format: migrations", () => {
  it("a format 1 cap (no stamp, children without their count and index) is migrated once at its wake", async () => {
    const root = await mintRoot(`format/${crypto.randomUUID()}/`);
    for (const path of ["a", "b"]) expect((await cap(root.token).subdir({ path })).status).toBe(201);
    await runInDurableObject(await capObject(root.token), (_i, state) => {
      // As format 1 left a cap minted before the count and the ordered index.
      state.storage.sql.exec(`DROP TABLE ${FORMAT_TABLE}`);
      for (const [key] of [...state.storage.kv.list({ prefix: "childAt:" })]) state.storage.kv.delete(key);
      state.storage.kv.delete(CHILD_COUNT);
      const woken = new CapObject(state as DurableObjectState, env);
      expect(storedFormat(state.storage, "cap")).toBe(STATE_FORMAT);
      expect(state.storage.kv.get(CHILD_COUNT)).toBe(2);
      expect([...state.storage.kv.list({ prefix: "childAt:" })]).toHaveLength(2);
      const before = dump(state.storage);
      // A second wake finds the format current and changes nothing.
      new CapObject(state as DurableObjectState, env);
      expect(dump(state.storage)).toEqual(before);
      return woken;
    });
    const page = (await (await cap(root.token).children()).json()) as { children: unknown[] };
    expect(page.children).toHaveLength(2);
  });

  it("a format 0 tombstone's pending children become child records, which the alarm's retry walks", async () => {
    const key = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
    await runInDurableObject(env.CAPS.get(env.CAPS.idFromName(key)), (_i, state) => {
      const pending = [{ id: "aaaaaaaaaaaaaaaa", key: "0".repeat(64) }];
      state.storage.kv.put(TOMBSTONE, { pending, parent: null });
      new CapObject(state as DurableObjectState, env);
      expect(state.storage.kv.get(TOMBSTONE)).toEqual({ pending: [], parent: null });
      expect(state.storage.kv.get("child:aaaaaaaaaaaaaaaa")).toEqual(pending[0]);
      expect(storedFormat(state.storage, "cap")).toBe(STATE_FORMAT);
      state.storage.sql.exec(`DROP TABLE ${FORMAT_TABLE}`);
      for (const [k] of [...state.storage.kv.list()]) state.storage.kv.delete(k);
    });
  });

  it("each store's migrations are idempotent: run again over current state, they change nothing", async () => {
    const prefix = `format/${crypto.randomUUID()}/`;
    const root = await mintRoot(prefix);
    expect((await cap(root.token).write("a.md", "one")).status).toBe(201);
    expect((await cap(root.token).write("a.md", "two")).status).toBe(200);
    expect((await cap(root.token).subdir({ path: "kid" })).status).toBe(201);
    await runInDurableObject(await capObject(root.token), (_i, state) => {
      const before = dump(state.storage);
      state.storage.transactionSync(() => {
        for (const step of CAP_MIGRATIONS) step.up(state.storage);
      });
      expect(dump(state.storage)).toEqual(before);
    });
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    await runInDurableObject(journal, (_i, state) => {
      const before = dump(state.storage);
      state.storage.transactionSync(() => {
        for (const step of JOURNAL_MIGRATIONS) step.up(state.storage);
      });
      expect(dump(state.storage)).toEqual(before);
    });
  });

  it("a migration that fails halfway leaves the old format whole, and the next wake tries again", async () => {
    const root = await mintRoot(`format/${crypto.randomUUID()}/`);
    await runInDurableObject(await capObject(root.token), (_i, state) => {
      state.storage.sql.exec(`DROP TABLE ${FORMAT_TABLE}`);
      const before = dump(state.storage);
      const halfway: Migration[] = [
        {
          to: 2,
          what: "a first step that writes",
          up(storage) {
            storage.kv.put("made-by-step-one", 1);
            storage.sql.exec("CREATE TABLE step_one (x)");
          },
        },
        {
          to: 3,
          what: "a second step that dies",
          up() {
            throw new Error("killed halfway");
          },
        },
      ];
      expect(migrateOnWake(state.storage, "cap", halfway, { stampEmpty: false, build: 3 })).toEqual({
        ok: false,
        error: {
          code: "unavailable",
          message: "this vault's state could not be migrated from format 1 to 3; it was left in format 1, untouched",
        },
      });
      expect(dump(state.storage)).toEqual(before);
      expect(storedFormat(state.storage, "cap")).toBeNull();
      // The next wake, with migrations that work, gets there.
      expect(migrateOnWake(state.storage, "cap", CAP_MIGRATIONS, { stampEmpty: false })).toEqual({
        ok: true,
        value: { from: 1, to: STATE_FORMAT },
      });
    });
    expect((await cap(root.token).write("a.md", "x")).status).toBe(201);
  });
});

describe("state format: newer state is refused, never written", () => {
  const NEWER = STATE_FORMAT + 1;
  const refusal = {
    ok: false,
    error: {
      code: "unavailable",
      message: `this vault's state is format ${NEWER}, written by a newer capvault; this build reads formats up to ${STATE_FORMAT}, so it reads and writes nothing: upgrade capvault (docs/upgrading.md)`,
    },
  };

  it("a cap object of a newer format answers every call with the refusal that names both, and writes nothing", async () => {
    const root = await mintRoot(`format/${crypto.randomUUID()}/`);
    expect((await cap(root.token).write("a.md", "old")).status).toBe(201);
    await runInDurableObject(await capObject(root.token), async (_i, state) => {
      stampFormat(state.storage, "cap", NEWER);
      const before = dump(state.storage);
      const woken = new CapObject(state as DurableObjectState, env);
      expect(await woken.describe()).toEqual(refusal);
      expect(await woken.statPath("a.md")).toEqual(refusal);
      expect(await woken.deleteFile("a.md")).toEqual(refusal);
      expect(await woken.mintChild({ path: "kid" } as never, "https://vault.test")).toEqual(refusal);
      expect(await woken.revoke()).toEqual(refusal);
      expect(await woken.listChildren()).toEqual(refusal);
      expect(await woken.forgetChild("anything")).toBeNull();
      await woken.alarm();
      expect(dump(state.storage)).toEqual(before);
      // Back to this build's format, for the rest of the test.
      stampFormat(state.storage, "cap");
    });
    // The file the refused delete named is still there.
    expect(await (await cap(root.token).read("a.md")).text()).toBe("old");
  });

  it("the registry and a journal of a newer format refuse too, unchanged", async () => {
    const prefix = `format/${crypto.randomUUID()}/`;
    const root = await mintRoot(prefix);
    expect((await cap(root.token).write("a.md", "x")).status).toBe(201);
    await runInDurableObject(env.ROOTS.get(env.ROOTS.idFromName("registry")), async (_i, state) => {
      stampFormat(state.storage, "registry", NEWER);
      const before = dump(state.storage);
      const woken = new RootRegistry(state as DurableObjectState, env);
      expect(await woken.listRoots()).toEqual(refusal);
      expect(await woken.revokeRoot(root.id)).toEqual(refusal);
      expect(dump(state.storage)).toEqual(before);
      stampFormat(state.storage, "registry");
    });
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    await runInDurableObject(journal, async (_i, state) => {
      stampFormat(state.storage, "journal", NEWER);
      const before = dump(state.storage);
      const woken = new RootJournal(state as DurableObjectState, env);
      expect(await woken.newestId()).toEqual(refusal);
      expect(await woken.usage("")).toEqual(refusal);
      expect(dump(state.storage)).toEqual(before);
      stampFormat(state.storage, "journal");
    });
    expect(await errorCode(await cap(root.token).read("missing.md"))).toBe("not_found");
  });
});

describe("state format: the R2 layout", () => {
  it("the bucket carries its layout's format at its top, which no cap names or lists", async () => {
    await mintRoot(`format/${crypto.randomUUID()}/`);
    const stamp = await env.BUCKET.get(FORMAT_FILE_NAME);
    expect(stamp && JSON.parse(await stamp.text())).toEqual({ format: STATE_FORMAT, release: RELEASE });
    const whole = await mintRoot("");
    const listed = (await (await cap(whole.token).list("")).json()) as { entries: { name: string }[] };
    expect(listed.entries.map((e) => e.name)).not.toContain(FORMAT_FILE_NAME);
    expect(await errorCode(await cap(whole.token).read(FORMAT_FILE_NAME))).toBe("invalid_path");
  });

  it("a layout of a newer format is refused naming both, and its stamp is left as it is", async () => {
    const stamp = await env.BUCKET.get(FORMAT_FILE_NAME);
    const current = stamp ? await stamp.text() : null;
    const newer = JSON.stringify({ format: STATE_FORMAT + 1, release: "9.0.0" });
    try {
      forgetR2FormatCheck();
      await env.BUCKET.put(FORMAT_FILE_NAME, newer);
      expect(await checkR2Format(env.BUCKET)).toMatchObject({
        ok: false,
        error: { message: expect.stringContaining(`state is format ${STATE_FORMAT + 1}`) },
      });
      expect(await (await env.BUCKET.get(FORMAT_FILE_NAME))?.text()).toBe(newer);
      await env.BUCKET.put(FORMAT_FILE_NAME, "not json");
      expect(await checkR2Format(env.BUCKET)).toMatchObject({ ok: false, error: { code: "unavailable" } });
      // An older (format 1: absent) layout is stamped.
      await env.BUCKET.delete(FORMAT_FILE_NAME);
      expect(await checkR2Format(env.BUCKET)).toEqual({ ok: true, value: null });
      expect(JSON.parse((await (await env.BUCKET.get(FORMAT_FILE_NAME))?.text()) ?? "")).toMatchObject({
        format: STATE_FORMAT,
      });
    } finally {
      if (current !== null) await env.BUCKET.put(FORMAT_FILE_NAME, current);
    }
  });
});
