/**
 * Process exit codes, stable for scripts:
 * 0 done; 1 the vault refused the operation (a CapError: the wire code is on
 * stderr); 2 the command line was wrong (nothing was sent); 3 the vault could
 * not be reached or answered as something that is not a vault (retryable);
 * 130 a long-running command (watch) was stopped with Ctrl-C.
 */
export const EXIT = {
  ok: 0,
  refused: 1,
  usage: 2,
  unavailable: 3,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
