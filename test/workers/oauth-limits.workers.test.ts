/**
 * Abuse bounds on the consent endpoint (issue 22): each client's authorization
 * requests are counted per minute, so an open registration cannot be turned
 * into an unbounded stream of consent pages or approvals.
 */
import { describe, expect, it } from "vitest";
import { AUTHORIZATIONS_PER_MINUTE } from "../../durable-objects/oauth-registry.ts";
import { call, ORIGIN } from "./vault.ts";

const REDIRECT = "https://client.example/callback";

async function register(name: string): Promise<string> {
  const res = await call("POST", "/oauth/register", { json: { redirect_uris: [REDIRECT], client_name: name } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function consentPage(clientId: string) {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "s",
    resource: `${ORIGIN}/mcp`,
  });
  return call("GET", `/oauth/authorize?${query}`, { redirect: "manual" });
}

describe("authorization requests per client", () => {
  it("answers a client's consent pages up to its allowance, then 429 with Retry-After; another client is unaffected", async () => {
    const other = await register("Other");
    // The allowance is per wall-clock minute: an attempt that straddles a minute's turn proves nothing, so it is re-run.
    const minute = () => Math.floor(Date.now() / 60_000);
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 3 && !refused; attempt++) {
      const greedy = await register(`Greedy ${attempt}`);
      const start = minute();
      for (let i = 0; i < AUTHORIZATIONS_PER_MINUTE; i++) {
        const page = await consentPage(greedy);
        expect(page.status, `request ${i + 1}`).toBe(200);
        await page.body?.cancel();
      }
      const last = await consentPage(greedy);
      if (minute() === start) refused = last;
      else await last.body?.cancel();
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("60");
    expect(await refused?.text()).toContain("Too many authorization requests");
    const fine = await consentPage(other);
    expect(fine.status).toBe(200);
    expect(await fine.text()).toContain("Other");
  });

  it("an unknown client is a page, never counted as a client", async () => {
    const page = await consentPage("no-such-client");
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("No such client");
  });
});
