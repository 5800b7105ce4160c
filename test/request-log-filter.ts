/**
 * The worker logs one line per request (worker/request-log.ts). Under the
 * workers pool those lines come from the tests' own requests, thousands per
 * run: noise there (the log itself is tested in test/node/launcher.node.test.ts).
 *
 * vitest reads `onConsoleLog` from the root config only (it is one of its
 * non-project options): a project's own is ignored under `npm test`. So both
 * the root config and the workers config (the root when a workers file is run
 * alone) use this one filter.
 */
const REQUEST_LINE = /^(GET|HEAD|PUT|POST|DELETE|PATCH|OPTIONS) (\/|\(no route\))\S* \d{3} \d+ms\s*$/;

/** `false` (drop) for a request line logged by a workers-project test; every other log is kept. */
export function keepConsoleLog(
  log: string,
  _type: "stdout" | "stderr",
  entity?: { project: { name: string } },
): boolean {
  return !(REQUEST_LINE.test(log) && (entity === undefined || entity.project.name.startsWith("workers")));
}
