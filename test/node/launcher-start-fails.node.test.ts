/**
 * `capvault serve` when it cannot start (its port taken): one line naming
 * the port and what to run instead, and no process left behind, its own
 * helpers included. No vault runs here: each start fails before it serves.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { groupPids } from "./process-sockets.ts";
import { NODE_ARGS, unusedPort } from "./test-vault.ts";

describe("a start that fails", () => {
  it("exits with one line naming the port and the commands that work, leaving no process behind", async () => {
    const port = await unusedPort();
    const squatter = createServer().listen(port, "127.0.0.1");
    await once(squatter, "listening");
    const base = await mkdtemp(path.join(os.tmpdir(), "capvault-taken-"));
    try {
      const child = spawn(process.execPath, [...NODE_ARGS, path.join(PROJECT_ROOT, "cli/capvault.ts"), "serve"], {
        cwd: base,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PORT: String(port),
          HOST: "127.0.0.1",
          CAPVAULT_STATE: path.join(base, "state"),
          CAPVAULT_ADMIN_TOKEN: "",
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          // A cold tsx cache, as in a clean clone: tsx then runs an esbuild service of its own.
          TMPDIR: base,
        },
      });
      let output = "";
      child.stdout!.on("data", (c: Buffer) => (output += c));
      child.stderr!.on("data", (c: Buffer) => (output += c));
      // Before the fix the launcher printed its error and then stayed alive,
      // held by the disk socket and Miniflare's servers: this never resolved.
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).not.toBe(0);
      expect(output).toBe(
        `capvault serve: 127.0.0.1:${port}: Address already in use (another capvault?); start on another port with ` +
          `\`PORT=${port + 1} npm start\` or \`npm start -- --port ${port + 1}\`\n`,
      );
      // Its whole process group (workerd and esbuild included) has exited.
      expect(await groupPids(child.pid!, true)).toEqual([]);
      // Nothing was generated for a start that could not happen: the retry is a first start.
      await expect(stat(path.join(base, "state", "admin-token"))).rejects.toThrow();
    } finally {
      squatter.close();
      await rm(base, { recursive: true, force: true });
    }
  }, 60_000);

  it("ends the processes it started before it exits, even ones that outlive a closed stdin", async () => {
    const port = await unusedPort();
    const squatter = createServer().listen(port, "127.0.0.1");
    await once(squatter, "listening");
    // Started the way esbuild starts its service (unref'd, stdin piped), but it would
    // never quit on its own: the launcher must end it and wait for it.
    const script = `
      import { spawn } from "node:child_process";
      import { runServe } from ${JSON.stringify(path.join(PROJECT_ROOT, "launcher/run-serve.ts"))};
      const helper = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["pipe", "ignore", "ignore"] });
      helper.unref();
      helper.stdin.unref();
      process.stdout.write("helper " + helper.pid + "\\n");
      process.exitCode = await runServe(["--port", "${port}"]);
    `;
    const child = spawn(process.execPath, [...NODE_ARGS, "--input-type=module", "-e", script], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CAPVAULT_ADMIN_TOKEN: "" },
    });
    let output = "";
    child.stdout!.on("data", (c: Buffer) => (output += c));
    child.stderr!.on("data", (c: Buffer) => (output += c));
    try {
      const [code] = (await once(child, "exit")) as [number | null];
      expect(output).toMatch(/^helper \d+$/m);
      expect(output).toMatch(/Address already in use/);
      expect(code).toBe(1);
      expect(await groupPids(child.pid!, true)).toEqual([]);
    } finally {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
      squatter.close();
    }
  }, 60_000);
});
