/**
 * A command that already printed what went wrong (a transfer in which some
 * files failed prints its whole report, `--json` included) and now only
 * needs exit code 1, with nothing more on stdout or stderr.
 */
export class ReportedFailure extends Error {
  constructor() {
    super("already reported");
    this.name = "ReportedFailure";
  }
}
