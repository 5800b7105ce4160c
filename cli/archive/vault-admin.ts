import { Readable } from "node:stream";
import { VaultTransport } from "../../clients/typescript/vault-transport.ts";
import { adminCredentials } from "../cap-source.ts";
import type { CommandInput } from "../command-spec.ts";

/** What `GET /admin/state` answers. */
export interface VaultState {
  release: string;
  stateFormat: number;
  archiveFormat: number;
  keyFingerprint: string | null;
  hasRoots: boolean;
  open: string | null;
  committing: boolean;
}

/**
 * The admin routes of export and import (docs/export-import.md), with the
 * admin token from the same places as `mint`; the token is scrubbed from any
 * message the transport makes.
 */
export class VaultAdmin {
  readonly #base: string;
  readonly #token: string;
  readonly #http: VaultTransport;

  constructor(input: CommandInput, command: string) {
    const { url, token } = adminCredentials(input, command);
    this.#base = `${url.replace(/\/+$/, "")}/admin`;
    this.#token = token;
    this.#http = new VaultTransport(input.io.fetch, [token]);
  }

  get #auth() {
    return { authorization: `Bearer ${this.#token}` };
  }

  /** An admin GET that must answer 200. */
  #fetchOk(route: string, query: Record<string, string | null | undefined>) {
    return this.#http.send({ method: "GET", url: `${this.#base}${route}`, query, headers: this.#auth, expect: [200] });
  }

  async get<T>(route: string, query: Record<string, string | null | undefined> = {}): Promise<T> {
    return this.#http.json<T>(await this.#fetchOk(route, query));
  }

  /** A route that answers bytes: its length, headers and body, streamed. */
  async bytes(
    route: string,
    query: Record<string, string | null>,
  ): Promise<{ length: number; headers: Headers; body: AsyncIterable<Uint8Array> }> {
    const response = await this.#fetchOk(route, query);
    const length = Number(response.headers.get("content-length"));
    const stream = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    return { length, headers: response.headers, body: Readable.fromWeb(stream as never) as AsyncIterable<Uint8Array> };
  }

  async post<T>(route: string, json: unknown): Promise<T> {
    const response = await this.#http.send({
      method: "POST",
      url: `${this.#base}${route}`,
      headers: this.#auth,
      json,
      expect: [200],
    });
    return this.#http.json<T>(response);
  }

  /** Sends `length` bytes of `body` to a PUT route. */
  async put(route: string, query: Record<string, string | null>, length: number, body: AsyncIterable<Uint8Array>) {
    const stream = Readable.toWeb(Readable.from(body)) as unknown as ReadableStream<Uint8Array>;
    const response = await this.#http.send({
      method: "PUT",
      url: `${this.#base}${route}`,
      query,
      headers: { ...this.#auth, "content-length": String(length), "content-type": "application/octet-stream" },
      body: stream,
      duplex: "half",
      expect: [200],
    });
    await response.body?.cancel();
  }

  state(): Promise<VaultState> {
    return this.get<VaultState>("/state");
  }
}
