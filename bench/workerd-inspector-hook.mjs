// Preloaded into the launcher by bench/workerd-profile.ts (NODE_OPTIONS=--import): starts workerd with its
// inspector on 127.0.0.1:$CAPVAULT_BENCH_WORKERD_INSPECTOR, so the bench can take a CPU profile of the
// worker's and the cap objects' isolates. The launcher itself sets no inspector (users never get one);
// Miniflare spawns workerd through child_process.spawn, which this wraps. Bench only.
import childProcess from "node:child_process";
import path from "node:path";

const port = process.env.CAPVAULT_BENCH_WORKERD_INSPECTOR;
if (port && /^\d+$/.test(port)) {
  const spawn = childProcess.spawn;
  childProcess.spawn = function (command, args, options) {
    if (
      typeof command === "string" &&
      path.basename(command) === "workerd" &&
      Array.isArray(args) &&
      args[0] === "serve"
    )
      args = [...args, `--inspector-addr=127.0.0.1:${port}`];
    return spawn.call(this, command, args, options);
  };
}
