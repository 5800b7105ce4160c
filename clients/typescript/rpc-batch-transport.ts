import type { RpcTransport } from "capnweb";
import type { VaultTransport } from "./vault-transport.ts";

/**
 * The client end of one HTTP batch, as capnweb's own, but sent through the
 * SDK's HTTP client: the `fetch` of the caller's choice, and a refusal of
 * the whole batch (a dead cap's `no_such_cap`, a batch too big) rejecting
 * every call with a `CapError` carrying its code, status and message.
 */
export class RpcBatchTransport implements RpcTransport {
  #toSend: string[] | null = [];
  #received: string[] | null = null;
  #aborted: unknown;
  readonly #sent: Promise<void>;

  constructor(http: VaultTransport, url: string) {
    this.#sent = this.#sendOnNextTick(http, url);
  }

  send(message: string): void {
    this.#toSend?.push(message);
  }

  async receive(): Promise<string> {
    if (!this.#received) await this.#sent;
    const next = this.#received?.shift();
    if (next === undefined) throw new Error("the RPC batch has ended");
    return next;
  }

  abort(reason: unknown): void {
    this.#aborted = reason;
  }

  /** Every call made before the next tick goes out as one request. */
  async #sendOnNextTick(http: VaultTransport, url: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.#aborted !== undefined) throw this.#aborted;
    const batch = this.#toSend ?? [];
    this.#toSend = null;
    const response = await http.send({ method: "POST", url, body: batch.join("\n"), expect: [200] });
    const text = await response.text();
    this.#received = text === "" ? [] : text.split("\n");
  }
}
