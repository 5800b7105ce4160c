/**
 * `capvault serve` in the published package. The vault runs on workerd
 * (through Miniflare), a native binary of ~100 MB per platform, plus the
 * worker's sources and build: the package ships the clients only, so a
 * `npm i capvault` for an agent's SDK or CLI pulls in no runtime.
 */
export async function runServe(_args: string[]): Promise<number> {
  process.stderr.write(
    [
      "capvault serve: this package holds the clients (the CLI, `capvault mcp` and capvault/client), not the vault.",
      "Run the vault from a checkout of the capvault repository:",
      "",
      "  npm install && npm start      # http://127.0.0.1:8787, prints the admin token and a root cap",
      "",
      "or deploy it to Cloudflare with `wrangler deploy` from that checkout. Then point this CLI at a cap:",
      "  export CAPVAULT_CAP=http://127.0.0.1:8787/object/…",
      "",
    ].join("\n"),
  );
  return 2;
}
