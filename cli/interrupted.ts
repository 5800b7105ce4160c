/**
 * A long-running command (watch) stopped by Ctrl-C or SIGTERM: not a failure
 * to report, only exit code 130 (128 + SIGINT), as shells give a process
 * the signal ended, so a script can tell it from the command's own end.
 */
export class Interrupted extends Error {
  constructor() {
    super("interrupted");
    this.name = "Interrupted";
  }
}
