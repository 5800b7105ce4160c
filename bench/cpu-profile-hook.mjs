// Preloaded into the launcher by `npm run bench -- --profile DIR` (NODE_OPTIONS=--import, since Node 20
// refuses --cpu-prof there): samples the launcher's Node process (the disk host, Miniflare's side) and
// writes a .cpuprofile into DIR when the process is told to stop. Bench only.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import path from "node:path";

const dir = process.env.CAPVAULT_BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // An in-thread inspector session answers synchronously, so the profile is written before the process ends.
    session.post("Profiler.stop", (error, result) => {
      if (error) return;
      // The folder may not exist yet: `--profile DIR` names where to put it, not a folder made first.
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `launcher-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  };
  // At SIGTERM (the launcher's own listener still stops it), since its shutdown may end in SIGKILL.
  process.once("SIGTERM", write);
  process.once("beforeExit", write);
}
