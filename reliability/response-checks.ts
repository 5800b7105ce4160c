import { isErrorCode } from "../shared/error-codes.ts";
import { statusOf } from "../worker/http-error.ts";
import type { FindingKind } from "./findings.ts";
import { header, type Observed, text } from "./http-call.ts";

export interface Violation {
  kind: FindingKind;
  detail: string;
}

/**
 * The properties every response must have, whatever was asked: never a 5xx;
 * never a secret (the root prefix, a host path, the canary from outside the
 * root) in the body or any header; every refusal a contract code with its one
 * status. The tool routes answer 200 with a tool-level result: there the
 * refusal's code is in `Capvault-Error-Code` (memory) or starts the error
 * text (MCP), and JSON-RPC framing errors are MCP's own, not the vault's.
 */
export function checkResponse(
  observed: Observed,
  secrets: readonly string[],
  route?: "mcp" | "memory",
  head = false,
): Violation[] {
  const out: Violation[] = [];
  if (observed.status >= 500)
    out.push({ kind: "5xx", detail: `status ${observed.status}: ${text(observed).slice(0, 160)}` });
  // latin1 keeps every byte as one char: a secret split by invalid UTF-8 is still found.
  const body = Buffer.from(observed.body).toString("latin1") + Buffer.from(observed.body).toString("utf8");
  const heads = observed.headers.map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const secret of secrets) {
    if (body.includes(secret))
      out.push({
        kind: "leak",
        detail: `body holds ${JSON.stringify(secret.slice(0, 24))}…: ${text(observed).slice(0, 160)}`,
      });
    if (heads.includes(secret))
      out.push({ kind: "leak", detail: `a header holds ${JSON.stringify(secret.slice(0, 24))}…` });
  }
  // A HEAD answer has no body to carry the code; its status and headers were checked above.
  const refusal = head && observed.status !== 0 ? null : refusalProblem(observed, route);
  if (refusal) out.push({ kind: "other", detail: refusal });
  return out;
}

function refusalProblem(observed: Observed, route?: "mcp" | "memory"): string | null {
  const { status } = observed;
  if (status === 0) return `no answer: ${observed.error ?? "?"}`;
  // workerd's HTTP layer refuses oversized request heads before the worker runs; no vault data is involved.
  if (status === 431) return null;
  if (status >= 400) {
    const parsed = parse(text(observed)) as { error?: { code?: unknown; message?: unknown } } | undefined;
    const code = parsed?.error?.code;
    if (route === "mcp" && typeof code === "number" && code <= -32000) return null;
    // A path that normalizes to the tokenless `/mcp` (a token spelled `..`) meets OAuth's resource server,
    // whose refusals are RFC 6750's: 401, a challenge, no body or `{ error, error_description }`.
    const oauth = parsed as { error?: unknown; error_description?: unknown } | undefined;
    const rfc6750 =
      observed.body.length === 0 || (typeof oauth?.error === "string" && typeof oauth.error_description === "string");
    if (status === 401 && rfc6750 && /^(Bearer|DPoP) /.test(header(observed, "www-authenticate") ?? "")) return null;
    if (!isErrorCode(code)) return `refusal ${status} outside the contract: ${text(observed).slice(0, 160)}`;
    if (statusOf(code) !== status) return `code ${code} answered with ${status}, the contract says ${statusOf(code)}`;
    if (typeof parsed?.error?.message !== "string") return `refusal ${code} without a message`;
    return null;
  }
  if (status !== 200) return null;
  if (route === "memory") {
    const code = header(observed, "capvault-error-code");
    const isError = text(observed).startsWith("Error:");
    if (isError !== (code !== null))
      return `memory result and Capvault-Error-Code disagree: ${code} / ${text(observed).slice(0, 80)}`;
    if (code !== null && !isErrorCode(code)) return `memory error code ${code} is not a contract code`;
  }
  if (route === "mcp") return mcpProblem(text(observed));
  return null;
}

/** Each tool error must begin with a contract code, or be the SDK's own JSON-RPC error for a malformed call. */
function mcpProblem(body: string): string | null {
  const parsed = parse(body);
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const result = (message as { result?: { isError?: boolean; content?: { text?: string }[] } } | undefined)?.result;
    if (!result?.isError) continue;
    const first = result.content?.[0]?.text ?? "";
    const code = /^([a-z_]+): /.exec(first)?.[1];
    if (isErrorCode(code) || /^MCP error -32\d{3}:/.test(first)) continue;
    return `MCP tool error outside the contract: ${first.slice(0, 160)}`;
  }
  return null;
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
