import { RIGHTS } from "../../shared/rights.ts";

/** What an authorization request asks, as checked (worker/oauth/oauth-authorize.ts); carried through the form. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | null;
  resource: string;
}

/** The lifetimes offered, in seconds; the grant (its child cap) ends after the one chosen. */
export const LIFETIMES: readonly { seconds: number; label: string }[] = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 7 * 86_400, label: "7 days" },
  { seconds: 30 * 86_400, label: "30 days" },
  { seconds: 90 * 86_400, label: "90 days" },
];
export const DEFAULT_LIFETIME = 7 * 86_400;
const DEFAULT_RIGHTS = new Set(["read", "list"]);

/**
 * Fills the cap field from the URL fragment (`/oauth/authorize?…#<token>`, as
 * the console is opened) and drops the fragment from the address and the
 * history. Admitted by its hash alone.
 */
const SCRIPT = `const t=location.hash.slice(1);if(t){document.getElementById("cap").value=t;history.replaceState(null,"",location.pathname+location.search);}`;
let scriptHash: Promise<string> | undefined;
function hashOfScript(): Promise<string> {
  scriptHash ??= crypto.subtle
    .digest("SHA-256", new TextEncoder().encode(SCRIPT))
    .then((d) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(d)))}'`);
  return scriptHash;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

function hidden(name: string, value: string | null): string {
  return value === null ? "" : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
}

async function page(title: string, body: string, formTarget: string | null, status: number): Promise<Response> {
  const csp = [
    "default-src 'none'",
    `script-src ${await hashOfScript()}`,
    "style-src 'self'",
    // The approval's redirect to the client is a navigation the form started: it must be allowed too.
    `form-action ${formTarget === null ? "'none'" : `'self' ${formTarget}`}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · capvault</title>
<link rel="stylesheet" href="/ui/console.css">
</head>
<body>
<main id="view">
${body}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
  return new Response(html, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": csp,
      "Cache-Control": "no-store",
    },
  });
}

/** A request that cannot be sent back to any client (unknown client, unregistered redirect_uri): shown, never redirected. */
export function errorPage(message: string, status = 400): Promise<Response> {
  return page("Authorization refused", `<h1>Authorization refused</h1><p>${escapeHtml(message)}</p>`, null, status);
}

/**
 * The consent form: who asks (its name and redirect URI as it registered
 * them, marked unverified: registration is open), which cap of the
 * person's to delegate from, the folder, the rights and the lifetime.
 * `problem` is a refusal of the last submission (a dead cap, rights it lacks).
 */
export function consentPage(
  request: AuthorizationRequest,
  client: { name: string },
  problem: { message: string; status: number } | null = null,
): Promise<Response> {
  const redirectOrigin = new URL(request.redirectUri).origin;
  const rights = RIGHTS.map(
    (r) =>
      `<label><input type="checkbox" name="rights" value="${r}"${DEFAULT_RIGHTS.has(r) ? " checked" : ""}> ${r}</label>`,
  ).join("\n");
  const lifetimes = LIFETIMES.map(
    (l) => `<option value="${l.seconds}"${l.seconds === DEFAULT_LIFETIME ? " selected" : ""}>${l.label}</option>`,
  ).join("");
  const body = `<h1>Grant a folder to an MCP client</h1>
<p><strong>${escapeHtml(client.name)}</strong> (unverified: anyone can register any name) asks for access.
Approving sends it to <code>${escapeHtml(request.redirectUri)}</code>.</p>
${problem ? `<p role="alert" class="error">${escapeHtml(problem.message)}</p>` : ""}
<form method="post" action="/oauth/authorize" autocomplete="off">
${hidden("client_id", request.clientId)}
${hidden("redirect_uri", request.redirectUri)}
${hidden("code_challenge", request.codeChallenge)}
${hidden("code_challenge_method", "S256")}
${hidden("response_type", "code")}
${hidden("state", request.state)}
${hidden("resource", request.resource)}
<p><label>Your cap (its token or URL; it stays in this form)<br><input id="cap" name="cap" type="password" required size="60"></label></p>
<p><label>Folder under that cap (empty: all of it)<br><input name="path" size="60"></label></p>
<fieldset><legend>Rights</legend>
${rights}
</fieldset>
<p><label>Lifetime <select name="ttl">${lifetimes}</select></label></p>
<p><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`;
  return page("Authorize", body, redirectOrigin, problem?.status ?? 200);
}
