import { isRemoteSpec, remoteSpecPath } from "../remote-path.ts";
import { UsageError } from "../usage-error.ts";

/** A `cp`/`sync` argument pair, sorted into which side is the cap and which the local disk. */
export interface Endpoints {
  direction: "up" | "down";
  local: string;
  /** Relative to the cap ("" = its root). */
  remote: string;
  /** The destination as typed (a trailing `/` matters for files). */
  destination: string;
}

/**
 * SRC and DST of `cp` and `sync`: exactly one is remote, written `:PATH`
 * (`:` alone is the cap's root), as rclone writes `remote:path`; the cap
 * itself comes from CAPVAULT_CAP or --cap-file. A local name that starts
 * with `:` is written `./:name`.
 */
export function endpoints(source: string, destination: string, command: string): Endpoints {
  const sourceRemote = isRemoteSpec(source);
  const destinationRemote = isRemoteSpec(destination);
  if (sourceRemote === destinationRemote) {
    throw new UsageError(
      sourceRemote
        ? "both sides are remote: use `capvault mv` inside a cap"
        : "one side must be remote, written :PATH (: alone is the cap's root)",
      command,
    );
  }
  return sourceRemote
    ? { direction: "down", remote: remoteSpecPath(source), local: destination, destination }
    : { direction: "up", local: source, remote: remoteSpecPath(destination), destination };
}
