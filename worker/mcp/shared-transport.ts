import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";

/**
 * The one transport of a server that every request shares. Each request's
 * calls go in under ids of the transport's own, so two requests that both
 * sent id 1 never receive each other's answers, and come back under the ids
 * their sender chose.
 *
 * Notifications and requests the server sends have nowhere to go: the
 * endpoint is stateless and keeps no stream open, as before (the SDK's
 * transport in JSON response mode dropped them too).
 */
export class SharedTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /**
   * Hands a request straight to the server's request handling, when set.
   * The SDK's onmessage first tries each message as a response, twice, and
   * a failed zod parse builds an error with its issues and a stack: about
   * 0.5 ms a call, more than this endpoint's own work.
   */
  deliver?: (request: JSONRPCRequest) => void;
  private nextId = 0;
  private readonly waiting = new Map<number, (answer: JSONRPCMessage) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if ("method" in message || !("id" in message)) return;
    const answer = this.waiting.get(message.id as number);
    if (!answer) return;
    this.waiting.delete(message.id as number);
    answer(message);
  }

  /** The server's answer to each of `requests`, in their order. */
  call(requests: readonly JSONRPCRequest[]): Promise<JSONRPCMessage[]> {
    return Promise.all(
      requests.map(
        (request) =>
          new Promise<JSONRPCMessage>((resolve) => {
            const id = this.nextId++;
            this.waiting.set(id, (answer) => resolve({ ...answer, id: request.id } as JSONRPCMessage));
            if (this.deliver) this.deliver({ ...request, id });
            else this.onmessage?.({ ...request, id });
          }),
      ),
    );
  }
}
