/** A mistake on the command line, found before anything was sent. Exits 2. */
export class UsageError extends Error {
  /** The command whose `--help` to point at, if any. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}
