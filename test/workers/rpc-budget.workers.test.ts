import { describe, expect, it } from "vitest";
import { refusal } from "../../shared/refusals.ts";
import { RPC_LIMITS } from "../../worker/rpc/rpc-limits.ts";
import { RpcSessionBudget } from "../../worker/rpc/rpc-session-budget.ts";

// A WebSocket session has no total of calls: what bounds its memory is what
// runs and waits at once. A waiting write holds its decoded message, so the
// bytes held must be bounded, not only the number of calls (2,048 waiting
// 8 MiB writes would be 16 GiB in one worker). Run in workerd, where the
// budget runs.

describe("an RPC session's budget", () => {
  it("holds at most heldBytes of writes at once, running or waiting; other calls still run", async () => {
    const budget = new RpcSessionBudget("live");
    const stuck = Promise.withResolvers<string>();
    const big = RPC_LIMITS.messageBytes;
    const held = Array.from({ length: RPC_LIMITS.heldBytes / big }, () => budget.run(() => stuck.promise, big));
    // Fewer calls than inFlight run: only the bytes held refuse the next write.
    expect(held.length).toBeLessThan(RPC_LIMITS.inFlight);
    await expect(budget.run(async () => "ran", big)).rejects.toMatchObject(refusal("rpcBytesWaiting"));
    await expect(budget.run(async () => "small")).resolves.toBe("small");
    stuck.resolve("done");
    expect(await Promise.all(held)).toEqual(held.map(() => "done"));
    // Released as they end.
    await expect(budget.run(async () => "again", big)).resolves.toBe("again");
  });
});
