import { CONSOLE_SCRIPT_HASH } from "./console-script.generated.ts";

/**
 * The console's HTML: a shell the script fills in. Static and token-free, so it
 * can be cached by anyone; everything about a cap comes from the API at run time.
 * The script's integrity attribute is what lets the CSP's hash source admit
 * an external script.
 */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>capvault console</title>
<link rel="stylesheet" href="/ui/console.css">
<script type="module" src="/ui/console.js" integrity="${CONSOLE_SCRIPT_HASH}"></script>
</head>
<body>
<a class="skip" href="#view">Skip to content</a>
<header id="cap-header"></header>
<nav id="tabs" aria-label="Views"></nav>
<div id="status" role="status" aria-live="polite"></div>
<main id="view" tabindex="-1"><p>Loading…</p></main>
<noscript><p>The capvault console needs JavaScript.</p></noscript>
</body>
</html>
`;
