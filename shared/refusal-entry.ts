/**
 * The shape of one refusal and the lookup built over a table of them, apart
 * from the tables themselves (shared/refusals.ts and the families beside it).
 */
import type { ErrorCode } from "./error-codes.ts";
import type { CapFailure } from "./result.ts";

/**
 * A name the client itself sent (a JSON field, a query parameter), echoed
 * back cut to 40 characters. Only {@link echoedName} makes one, so a message
 * parameter is never a plain string: no root prefix or host path can slip in.
 */
export type EchoedName = string & { readonly __echoedName: unique symbol };

export function echoedName(raw: string): EchoedName {
  return raw.slice(0, 40) as EchoedName;
}

/** One refusal: its wire code and its text, fixed or built from typed parameters. */
export interface RefusalEntry {
  code: ErrorCode;
  message: string | ((params: never) => string);
}

export type MessageArgs<E extends RefusalEntry> = E["message"] extends string
  ? []
  : E["message"] extends (params: infer P) => string
    ? [params: P]
    : never;

/**
 * The lookup for a table of refusals: a reason (and its parameters) in, the
 * wire refusal out. The tools with texts of their own (memory tool, MCP) keep
 * their own table and build it with this too.
 */
export function refusalsFrom<T extends Record<string, RefusalEntry>>(table: T) {
  return <R extends keyof T & string>(reason: R, ...params: MessageArgs<T[R]>): CapFailure => {
    const entry = table[reason] as RefusalEntry;
    const { message } = entry;
    return {
      code: entry.code,
      message: typeof message === "string" ? message : (message as (p: unknown) => string)(params[0]),
    };
  };
}
