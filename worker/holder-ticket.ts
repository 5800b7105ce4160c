import type { Context } from "hono";
import type { CapObject } from "../durable-objects/cap-object.ts";
import type { HolderAdmission } from "../durable-objects/holder-binding.ts";
import type { Result } from "../shared/result.ts";

/**
 * A holder-bound request's admission rides on its first call to the cap's
 * object (CapObject.withHolder), so checking the proof costs no round trip of
 * its own. The gate (worker/holder-proof.ts) files the ticket; capStub hands
 * the routes a stub that spends it. Calls after the first wait for its
 * verdict, and none reaches the object once the admission was refused.
 */
export interface HolderTicket {
  /** The token the gate verified (its MAC) and digested, so capStub need not again. */
  token: string;
  /** The object's key: only the stub of this request's own cap spends the ticket. */
  key: string;
  /** The cap's public id. */
  id: string;
  admission: HolderAdmission;
  now: number;
  /** Set once spent (by the first call, or by the gate when no call came). */
  verdict: Promise<Result<null>> | null;
}

type Stub = DurableObjectStub<CapObject>;
type Ticketed = {
  withHolder(
    a: HolderAdmission,
    now: number,
    m: string,
    args: unknown[],
  ): Promise<{ admitted: Result<null>; value: unknown }>;
};

const tickets = new WeakMap<Context, HolderTicket>();

export function fileTicket(c: Context, ticket: HolderTicket): void {
  tickets.set(c, ticket);
}

/** The digest of `token` if the gate already verified it for this request. */
export function verifiedByGate(c: Context, token: string): { key: string; id: string } | null {
  const ticket = tickets.get(c);
  return ticket && ticket.token === token ? ticket : null;
}

/** The ticket's verdict, spending it through `stub.admitHolder` if no call did. */
export function spendTicket(c: Context, stub: Stub): Promise<Result<null>> | null {
  const ticket = tickets.get(c);
  if (!ticket) return null;
  ticket.verdict ??= stub.admitHolder(ticket.admission, ticket.now);
  return ticket.verdict;
}

/** `stub`, or for the request's bound cap a stub whose first call carries the admission. */
export function ticketedStub(c: Context, key: string, stub: Stub): Stub {
  const ticket = tickets.get(c);
  if (!ticket || ticket.key !== key) return stub;
  const call = async (name: string, args: unknown[]): Promise<unknown> => {
    if (ticket.verdict === null) {
      // Typed by hand: RPC's mapped types cannot carry an `unknown` result.
      const answer = (stub as unknown as Ticketed).withHolder(ticket.admission, ticket.now, name, args);
      ticket.verdict = answer.then((a) => a.admitted);
      const { admitted, value } = await answer;
      return admitted.ok ? value : admitted;
    }
    const admitted = await ticket.verdict;
    if (!admitted.ok) return admitted;
    return (stub as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
  };
  return new Proxy(stub, {
    get(target, name) {
      const value = Reflect.get(target, name);
      // `then` stays the stub's own (not thenable), or awaiting the stub would spend the ticket.
      if (typeof name !== "string" || name === "then" || typeof value !== "function") return value;
      return (...args: unknown[]) => call(name, args);
    },
  });
}
