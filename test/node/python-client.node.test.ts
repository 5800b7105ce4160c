import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CapCheckpointSaver, CapStore } from "../../clients/langgraph/index.ts";
import { FsCap } from "../../clients/typescript/index.ts";
import { runInProcess } from "../cli-test-io.ts";
import {
  installLangGraphExtra,
  type LangGraphExtra,
  makePythonVenv,
  PYTHON_PACKAGE,
  type PythonVenv,
  pythonEnv,
  run,
} from "./python-venv.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let venv: PythonVenv;
let outside: string;
let langgraphExtra: Promise<LangGraphExtra> | undefined;
/** The langgraph extra, installed once, on first use (the rest of the suite does not wait for it). */
const withLangGraph = () => {
  langgraphExtra ??= installLangGraphExtra(venv);
  return langgraphExtra;
};
// The tests run from here, where no capvault/ folder can shadow the installed package.
const TESTS = path.join(PYTHON_PACKAGE, "tests");
/** The client's suite, the Hermes vector's module first (capvault_test_support.py is their shared helper). */
const CLIENT_MODULES = ["test_capvault", "test_capvault_wire", "test_capvault_live"];

beforeAll(async () => {
  [vault, venv] = await Promise.all([startTestVault(), makePythonVenv()]);
  // The disk fixture the Python suite expects: a skill inside the root, and a
  // symlink leading out of it to a file it must never read or change.
  outside = await mkdtemp(path.join(os.tmpdir(), "capvault-outside-"));
  await writeFile(path.join(outside, "passwd"), "root:x:0:0\n");
  await mkdir(path.join(vault.diskRoot, "skills/hermes-fs-as-cap"), { recursive: true });
  await writeFile(path.join(vault.diskRoot, "skills/hermes-fs-as-cap/SKILL.md"), "# hermes-fs-as-cap\n");
  await symlink(path.join(outside, "passwd"), path.join(vault.diskRoot, "symlink-to-outside"));
}, 300_000);
afterAll(async () => {
  await vault?.stop();
  await venv?.remove();
  if (outside) await rm(outside, { recursive: true, force: true });
});

/** Caps reach Python through the environment only: a command line is visible to every local user. */
function liveEnv(): NodeJS.ProcessEnv {
  return pythonEnv({
    CAPVAULT_TEST_CAP: vault.rootCapUrl,
    CAPVAULT_TEST_DISK_CAP: vault.diskCapUrl,
    CAPVAULT_TEST_DISK_ROOT: vault.diskRoot,
  });
}

describe("Python package (clients/python)", () => {
  it("pip installs into a fresh venv from local sources only, typed, with no dependencies", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const probe = await run(
      venv.python,
      [
        "-c",
        "import capvault, capvault.hermes, importlib.metadata as m, json, os; print(json.dumps({" +
          "'file': capvault.__file__, 'requires': m.requires('capvault') or []," +
          "'extras': m.metadata('capvault').get_all('Provides-Extra') or []," +
          "'typed': os.path.isfile(os.path.join(os.path.dirname(capvault.__file__), 'py.typed'))}))",
      ],
      { cwd: TESTS },
    );
    expect(probe.status, probe.output).toBe(0);
    const found = JSON.parse(probe.stdout) as { file: string; requires: string[]; extras: string[]; typed: boolean };
    expect(found.file.startsWith(path.join(venv.dir, "venv"))).toBe(true);
    // Nothing but the optional LangGraph extra, which capvault.langgraph alone imports.
    expect(found.requires).toEqual(['langgraph-checkpoint>=4.2; extra == "langgraph"']);
    expect(found.extras).toEqual(["langgraph"]);
    const core = await run(venv.python, ["-c", "import capvault.langgraph"], { cwd: TESTS });
    expect(core.status).not.toBe(0);
    expect(core.output).toContain('pip install "capvault[langgraph]"');
    expect(found.typed).toBe(true);
  });

  it("passes its suite from the installed package against the live vault, R2 and disk, the Hermes vector first", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const suite = await run(venv.python, ["-m", "unittest", "-v", ...CLIENT_MODULES], { cwd: TESTS, env: liveEnv() });
    expect(suite.status, suite.output).toBe(0);
    expect(suite.output).toMatch(/^OK$/m);
    expect(suite.output).not.toMatch(/skipped/);
    expect(/^(\w+) \(.*\) \.\.\. /m.exec(suite.output)?.[1]).toBe("test_hermes_fs_as_cap_vector");
    expect(await readFile(path.join(outside, "passwd"), "utf8")).toBe("root:x:0:0\n");
  }, 300_000);

  it("Hermes bisimulation: status quo and cap agree on benign sequences; only the status quo leaks", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const bisim = await run(venv.python, ["-m", "unittest", "-v", "test_hermes_bisim"], { cwd: TESTS, env: liveEnv() });
    console.log(bisim.stdout); // the seed and both sides' scorecard
    expect(bisim.status, bisim.output).toBe(0);
    expect(bisim.output).toMatch(/^OK$/m);
    expect(bisim.output).not.toMatch(/skipped/);
    const benign = /^benign: (\d+) sequences, \d+ calls: identical I\/O and folders in (\d+)\/\d+$/m.exec(bisim.stdout);
    expect(benign, bisim.stdout).not.toBeNull();
    if (!process.env.CAPVAULT_BISIM_SEQUENCES) expect(Number(benign![1])).toBeGreaterThanOrEqual(200);
    expect(benign![2]).toBe(benign![1]);
    expect(bisim.stdout).toMatch(/^score: \(a\) status quo leaked [1-9]\d*\/(\d+), \(b\) cap leaked 0\/\1$/m);
  }, 300_000);

  it("Hermes plugin: Hermes' own test vectors pass through the cap-backed tools, on disk and R2", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const modules = [
      "test_hermes_plugin",
      "test_hermes_file_ops",
      "test_hermes_skills_tool",
      "test_hermes_credential_files",
    ];
    const plugin = await run(venv.python, ["-m", "unittest", "-v", ...modules], {
      cwd: TESTS,
      env: liveEnv(),
    });
    expect(plugin.status, plugin.output).toBe(0);
    expect(plugin.output).toMatch(/^OK$/m);
    expect(plugin.output).not.toMatch(/skipped/);
    expect(plugin.output).toMatch(/^test_the_package_declares_the_hermes_entry_point .* \.\.\. ok$/m);
    for (const module of modules.slice(1)) expect(plugin.output).toContain(`(${module}.`);
    expect(await readFile(path.join(outside, "passwd"), "utf8")).toBe("root:x:0:0\n");
  }, 300_000);

  it("content search: FsCap.search and the Hermes plugin's search_files on the vault's search, on disk and R2", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const search = await run(venv.python, ["-m", "unittest", "-v", "test_search"], { cwd: TESTS, env: liveEnv() });
    expect(search.status, search.output).toBe(0);
    expect(search.output).toMatch(/^OK$/m);
    expect(search.output).not.toMatch(/skipped/);
  }, 300_000);
  it("folder trees and line windows: FsCap.rmtree, move and read_lines, and the Hermes plugin on them, on disk and R2", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const trees = await run(venv.python, ["-m", "unittest", "-v", "test_trees"], { cwd: TESTS, env: liveEnv() });
    expect(trees.status, trees.output).toBe(0);
    expect(trees.output).toMatch(/^OK$/m);
    expect(trees.output).not.toMatch(/skipped/);
  }, 300_000);
  it("LangGraph checkpointer and store: CapSaver and CapStore answer as InMemorySaver and InMemoryStore, on disk and R2", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const extra = await withLangGraph();
    expect(extra.ok, extra.log).toBe(true);
    const env = { ...liveEnv(), PYTHONPATH: extra.path };
    const modules = ["test_langgraph_saver", "test_langgraph_store"];
    const saver = await run(venv.python, ["-m", "unittest", "-v", ...modules], { cwd: TESTS, env });
    console.log(saver.stdout); // the seed and the operations compared
    expect(saver.status, saver.output).toBe(0);
    expect(saver.output).toMatch(/^OK$/m);
    expect(saver.output).not.toMatch(/skipped/);
    expect(saver.output).toMatch(/^Ran 11 tests in /m);
    expect(saver.stdout).toMatch(/^langgraph parity: identical answers, ops \{.*\}, \d+ non-empty$/m);
    expect(saver.stdout).toMatch(/^langgraph store parity: identical answers, ops \{.*\}$/m);
  }, 300_000);

  it("LangGraph checkpointer: a thread written by the TypeScript saver goes on in Python's, and back", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const extra = await withLangGraph();
    expect(extra.ok, extra.log).toBe(true);
    const area = await new FsCap(vault.rootCapUrl).subdir({ path: `langgraph-both-${Date.now()}` });
    const ts = new CapCheckpointSaver(area.url, { folder: "threads" });
    const first = emptyCheckpoint();
    first.id = uuid6(-1);
    first.channel_values = { notes: ["from ts"] };
    first.channel_versions = { notes: 1 };
    const thread = { configurable: { thread_id: "shared thread", checkpoint_ns: "" } };
    const put = await ts.put(thread, first, { source: "input", step: -1, parents: {} }, { notes: 1 });
    await ts.putWrites(put, [["notes", ["pending"]]], "task-1");

    const script = [
      "import json, os",
      "from capvault.langgraph import CapSaver",
      "saver = CapSaver(os.environ['AREA'], folder='threads', proxies={})",
      "got = saver.get_tuple({'configurable': {'thread_id': 'shared thread'}})",
      "nxt = {**got.checkpoint, 'id': os.environ['NEXT_ID'], 'channel_values': {'notes': got.checkpoint['channel_values']['notes'] + ['from py']},",
      "       'channel_versions': {'notes': saver.get_next_version(got.checkpoint['channel_versions']['notes'], None)}}",
      "done = saver.put(got.config, nxt, {'source': 'loop', 'step': 0, 'parents': {}}, nxt['channel_versions'])",
      "saver.put_writes(done, [('notes', 'py pending')], 'task-2')",
      "print(json.dumps({'values': got.checkpoint['channel_values'], 'metadata': got.metadata,",
      "  'writes': [list(w) for w in got.pending_writes], 'parent': got.parent_config, 'config': done}))",
    ].join("\n");
    const nextId = uuid6(-1);
    const py = await run(venv.python, ["-c", script], {
      cwd: TESTS,
      env: { ...pythonEnv({ AREA: area.url, NEXT_ID: nextId }), PYTHONPATH: extra.path },
    });
    expect(py.status, py.output).toBe(0);
    const got = JSON.parse(py.stdout);
    expect(got.values).toEqual({ notes: ["from ts"] });
    expect(got.metadata).toEqual({ source: "input", step: -1, parents: {} });
    expect(got.writes).toEqual([["task-1", "notes", ["pending"]]]);
    expect(got.parent).toBeNull();
    expect(got.config).toEqual({
      configurable: { thread_id: "shared thread", checkpoint_ns: "", checkpoint_id: nextId },
    });

    // Back in TypeScript: Python's checkpoint is the latest, on the TypeScript one, with its writes.
    const latest = await ts.getTuple({ configurable: { thread_id: "shared thread" } });
    expect(latest?.checkpoint.id).toBe(nextId);
    expect(latest?.checkpoint.channel_values).toEqual({ notes: ["from ts", "from py"] });
    expect(latest?.checkpoint.channel_versions).toEqual({ notes: 2 });
    expect(latest?.metadata).toEqual({ source: "loop", step: 0, parents: {} });
    expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(first.id);
    expect(latest?.pendingWrites).toEqual([["task-2", "notes", "py pending"]]);
    const history = [];
    for await (const t of ts.list({ configurable: { thread_id: "shared thread" } })) history.push(t.checkpoint.id);
    expect(history).toEqual([nextId, first.id]);
  }, 300_000);

  it("LangGraph store: an item the TypeScript CapStore put reads in Python's, and one Python updated reads back", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const extra = await withLangGraph();
    expect(extra.ok, extra.log).toBe(true);
    const area = await new FsCap(vault.rootCapUrl).subdir({ path: `langgraph-store-both-${Date.now()}` });
    const ts = new CapStore(area.url, { folder: "memories" });
    await ts.put(["users", "alice"], "notes/2026 draft", { text: "from ts", n: 1 });
    const created = (await ts.get(["users", "alice"], "notes/2026 draft"))?.createdAt;
    const script = [
      "import json, os",
      "from capvault.langgraph import CapStore",
      "store = CapStore(os.environ['AREA'], folder='memories', proxies={})",
      "got = store.get(('users', 'alice'), 'notes/2026 draft')",
      "store.put(('users', 'alice'), 'notes/2026 draft', {**got.value, 'text': 'from py'})",
      "store.put(('users', 'bob'), 'py', {'lang': 'python'})",
      "print(json.dumps({'value': got.value, 'created': got.created_at.isoformat(),",
      "  'found': [i.key for i in store.search(('users',), query='python')]}))",
    ].join("\n");
    const py = await run(venv.python, ["-c", script], {
      cwd: TESTS,
      env: { ...pythonEnv({ AREA: area.url }), PYTHONPATH: extra.path },
    });
    expect(py.status, py.output).toBe(0);
    const got = JSON.parse(py.stdout);
    expect(got.value).toEqual({ text: "from ts", n: 1 });
    expect(new Date(got.created).getTime()).toBe(created?.getTime());
    expect(got.found).toEqual(["py"]);
    const back = await ts.get(["users", "alice"], "notes/2026 draft");
    expect(back?.value).toEqual({ text: "from py", n: 1 });
    expect(back?.createdAt.getTime()).toBe(created?.getTime());
    expect(await ts.listNamespaces()).toEqual([
      ["users", "alice"],
      ["users", "bob"],
    ]);
  }, 300_000);

  it("share to a named holder, end to end: CLI key new, share --to, the Python client signs; the leaked URL opens nothing", async () => {
    expect(venv.ok, venv.log).toBe(true);
    // The stdlib Ed25519 the client signs with, against RFC 8032's vectors.
    const vectors = await run(venv.python, ["-m", "unittest", "-v", "test_holder"], { cwd: TESTS });
    expect(vectors.status, vectors.output).toBe(0);
    expect(vectors.output).toMatch(/^test_rfc8032_vectors .* \.\.\. ok$/m);
    const dir = await mkdtemp(path.join(os.tmpdir(), "capvault-holder-"));
    const keyFile = path.join(dir, "agent.jwk");
    const made = await runInProcess(["key", "new", keyFile]);
    expect(made.code, made.stderr).toBe(0);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const publicJwk = made.out.trim();
    expect(publicJwk).not.toMatch(/"d"/);
    const env = { CAPVAULT_CAP: vault.rootCapUrl };
    const shared = await runInProcess(["share", "holder-e2e", "--rights", "read,list,write", "--to", publicJwk], {
      env,
    });
    expect(shared.code, shared.stderr).toBe(0);
    const childUrl = shared.out.trim();
    const childEnv = { CAPVAULT_CAP: childUrl };
    const put = await runInProcess(["put", "-", "from-cli.txt", "--key-file", keyFile], {
      env: childEnv,
      stdin: "by the CLI",
    });
    expect(put.code, put.stderr).toBe(0);

    const script = [
      "import json, os",
      "from capvault import FsCap, HolderKey, CapError",
      "key = HolderKey.from_file(os.environ['KEY'])",
      "fs = FsCap(os.environ['CHILD'], holder=key)",
      "out = {'read': fs.read_text('from-cli.txt'), 'jkt': key.jkt}",
      "fs.write('from-python.txt', b'by Python')",
      "out['list'] = sorted(e['name'] for e in fs.list(''))",
      "try:",
      "    FsCap(os.environ['CHILD']).read('from-cli.txt')",
      "except CapError as e:",
      "    out['leaked'] = e.code",
      "print(json.dumps(out))",
    ].join("\n");
    const py = await run(venv.python, ["-c", script], {
      cwd: TESTS,
      env: pythonEnv({ KEY: keyFile, CHILD: childUrl }),
    });
    expect(py.status, py.output).toBe(0);
    const got = JSON.parse(py.stdout) as { read: string; list: string[]; leaked: string; jkt: string };
    expect(got.read).toBe("by the CLI");
    expect(got.list).toEqual(["from-cli.txt", "from-python.txt"]);
    expect(got.leaked).toBe("no_such_cap");
    // The URL as a log would show it: byte for byte an unknown token, while its holder keeps working.
    const leaked = await fetch(`${childUrl}/file?path=from-python.txt`);
    const unknown = await fetch(
      `${childUrl.replace(/object\/[a-z2-7]+/, `object/${"a".repeat(48)}`)}/file?path=from-python.txt`,
    );
    expect([leaked.status, await leaked.text()]).toEqual([unknown.status, await unknown.text()]);
    const cat = await runInProcess(["cat", "from-python.txt"], { env: { ...childEnv, CAPVAULT_KEY_FILE: keyFile } });
    expect(cat.out).toBe("by Python");
    const info = await runInProcess(["info", "--json"], { env: { ...childEnv, CAPVAULT_KEY_FILE: keyFile } });
    expect(JSON.parse(info.out).holder).toEqual({ jkt: got.jkt });
    await rm(dir, { recursive: true, force: true });
  }, 300_000);
});
