/** A fetch double for the SDK's wire tests: it records what each call sent and answers from a handler. */
import type { FetchLike } from "../clients/typescript/types.ts";

export const TOKEN = "abcdefghijklmnopqrstuvwxyz234567";
export const CAP_URL = `http://vault.test:8787/object/${TOKEN}`;

export interface Sent {
  method: string;
  url: URL;
  headers: Headers;
  body: string | null;
}

/** A fetch double that records requests and answers from a handler. */
export function fakeVault(answer: (sent: Sent) => Response | Promise<Response>): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.text() : null;
    const record = { method: request.method, url: new URL(request.url), headers: request.headers, body };
    sent.push(record);
    return answer(record);
  };
  return { fetch, sent };
}

export const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json", ...headers } });
export const wireError = (status: number, code: string, message = code) => json(status, { error: { code, message } });
