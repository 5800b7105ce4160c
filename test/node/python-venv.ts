/**
 * `pip install ./clients/python` into a fresh virtual environment, offline, as
 * a user would, so the Python tests run against the installed package and not
 * the source folder.
 *
 * Offline: pip's own configuration is read for the sources that are on this
 * machine (file:// indexes, find-links folders: the local wheel mirror that
 * holds setuptools, the package's build backend), then pip runs with its config
 * files switched off and only those local sources, so nothing can reach a
 * network index.
 */
import { spawn } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";

export const PYTHON_PACKAGE = path.join(PROJECT_ROOT, "clients/python");

export interface Run {
  status: number | null;
  output: string;
  stdout: string;
}

export interface PythonVenv {
  dir: string;
  python: string;
  /** Every command run to make the venv, with its output, for failure messages. */
  log: string;
  ok: boolean;
  /** pip's local sources (index URLs, find-links) as arguments, and the config-free environment it runs in. */
  pipSources: string[];
  pipEnv: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

/** Environment for Python processes: no PYTHONPATH (the source tree must not shadow the install), no pip config. */
export function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: "1", ...extra };
  delete env.PYTHONPATH;
  delete env.VIRTUAL_ENV;
  return env;
}

export function run(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? pythonEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", (error) => resolve({ status: null, output: `${output}\n${error.message}`, stdout }));
    child.once("close", (status) => resolve({ status, output, stdout }));
  });
}

/** The local sources in `pip config list` output: file:// index URLs and find-links folders. */
export function localPipSources(configList: string): { indexes: string[]; findLinks: string[] } {
  const indexes: string[] = [];
  const findLinks: string[] = [];
  for (const m of configList.matchAll(/^\S*\.(index-url|extra-index-url|find-links)='([^']*)'$/gm)) {
    for (const value of m[2]!.split(/\s+/).filter(Boolean)) {
      const local = value.startsWith("file://") || value.startsWith("/");
      if (!local) continue;
      const list = m[1] === "find-links" ? findLinks : indexes;
      if (!list.includes(value)) list.push(value);
    }
  }
  return { indexes, findLinks };
}

export async function makePythonVenv(): Promise<PythonVenv> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "capvault-venv-"));
  const python = path.join(dir, "venv/bin/python");
  let log = "";
  const step = async (cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<Run> => {
    const result = await run(cmd, args, { cwd: dir, env });
    log += `$ ${path.basename(cmd)} ${args.join(" ")}\n${result.output}\n(exit ${result.status})\n`;
    return result;
  };
  const venv: PythonVenv = {
    dir,
    python,
    log: "",
    ok: false,
    pipSources: [],
    pipEnv: {},
    remove: () => rm(dir, { recursive: true, force: true }),
  };

  // Debian's python3 keeps venv's ensurepip in the python3-venv package (.ci/run installs it).
  if ((await step("python3", ["-m", "venv", path.join(dir, "venv")])).status !== 0) {
    venv.log = `${log}\npython3 -m venv failed: on Debian, apt-get install python3-venv`;
    return venv;
  }
  const config = await step(python, ["-m", "pip", "config", "list"]);
  const { indexes, findLinks } = localPipSources(config.stdout);
  const sources = indexes.length
    ? ["--index-url", indexes[0]!, ...indexes.slice(1).flatMap((u) => ["--extra-index-url", u])]
    : ["--no-index"];
  // A copy, so the build's build/ and *.egg-info never land in (or are reused from) the source tree.
  const source = path.join(dir, "src");
  await cp(PYTHON_PACKAGE, source, {
    recursive: true,
    filter: (p) => !/(^|\/)(build|dist|__pycache__|[^/]*\.egg-info)$/.test(path.relative(PYTHON_PACKAGE, p)),
  });
  const env = pythonEnv({ PIP_CONFIG_FILE: os.devNull });
  for (const name of Object.keys(env)) if (name.startsWith("PIP_") && name !== "PIP_CONFIG_FILE") delete env[name];
  venv.pipSources = [...sources, ...findLinks.flatMap((f) => ["--find-links", f])];
  venv.pipEnv = env;
  const install = await step(
    python,
    ["-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", ...venv.pipSources, source],
    env,
  );
  venv.log =
    indexes.length || findLinks.length
      ? log
      : `${log}\nno local index or find-links in pip's config: setuptools cannot be found offline`;
  venv.ok = install.status === 0;
  return venv;
}

export interface LangGraphExtra {
  /** The folder the extra was installed into: put it on PYTHONPATH (the venv itself stays stdlib-only). */
  path: string;
  ok: boolean;
  log: string;
}

/**
 * The `langgraph` extra's packages (LangGraph, for capvault.langgraph), installed
 * offline from the same local sources into a folder of their own beside the
 * venv, so the venv's own "no dependencies" install stays what it was.
 *
 * Not `pip install "capvault[langgraph]"`: langchain-core and langgraph-sdk
 * require langchain-protocol, which the local mirror does not hold (it serves
 * chat-model streaming only; the test module stands in for it at import). So
 * their dependencies are installed first, resolved as usual, and then those
 * packages themselves without dependencies.
 */
export async function installLangGraphExtra(venv: PythonVenv): Promise<LangGraphExtra> {
  const target = path.join(venv.dir, "langgraph-extra");
  let log = "";
  const pip = async (args: string[]): Promise<boolean> => {
    const base = ["-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--target", target];
    const result = await run(venv.python, [...base, ...venv.pipSources, ...args], { cwd: venv.dir, env: venv.pipEnv });
    log += `$ pip install ${args.join(" ")}\n${result.output}\n(exit ${result.status})\n`;
    return result.status === 0;
  };
  const ok =
    venv.ok &&
    (await pip([
      ...["langsmith", "httpx", "jsonpatch", "packaging", "pydantic", "pyyaml", "tenacity", "typing-extensions"],
      ...["uuid-utils", "xxhash", "ormsgpack", "orjson", "websockets>=14,<17"],
    ])) &&
    (await pip([
      "--no-deps",
      "langchain-core",
      "langgraph-checkpoint>=4.2",
      "langgraph",
      "langgraph-prebuilt",
      "langgraph-sdk",
    ]));
  return { path: target, ok, log };
}
