import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, openConsoleBrowser, shot, tokenOf } from "./console-browser.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/**
 * What the console lets run in the vault's origin, in Debian's real Chromium:
 * its own script by hash only, and never a cap's uploaded script, HTML or
 * SVG, in the console or opened directly. The node project's shared vault (a
 * root of this file's own), one browser.
 */
let vault: SharedVault;
let browser: ConsoleBrowser;

beforeAll(async () => {
  vault = await sharedVault("console-scripts");
  browser = await openConsoleBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("web console in Chromium: scripts", () => {
  it("admits its own script by hash only: a cap's .js file injected into the page does not run", async () => {
    const script = await (await fetch(`${vault.url}/ui/console.js`)).arrayBuffer();
    const hash = `sha256-${createHash("sha256").update(Buffer.from(script)).digest("base64")}`;
    const page = await fetch(`${vault.url}/ui`);
    const scriptSrc = /(?:^|;)\s*script-src ([^;]*)/.exec(page.headers.get("content-security-policy") ?? "")?.[1];
    expect(scriptSrc).toBe(`'${hash}'`);
    expect(await page.text()).toContain(`integrity="${hash}"`);

    const cap = vault.rootCapUrl;
    const res = await fetch(`${cap}/file?path=injected.js`, {
      method: "PUT",
      body: "document.title = 'pwned'; fetch('/pwned-injected-js');",
      headers: { "content-type": "text/javascript" },
    });
    expect(res.status).toBe(201);
    const tab = await browser.context.newPage();
    await tab.goto(`${vault.url}/ui#${tokenOf(cap)}`);
    await tab.locator("#cap-header .facts").waitFor();
    // As HTML injection would: a script element naming a same-origin file. Its refusal is the event awaited.
    const src = JSON.stringify(`/object/${tokenOf(cap)}/file?path=injected.js`);
    const blocked = await tab.evaluate(`new Promise((resolve) => {
      addEventListener("securitypolicyviolation", (e) => resolve(e.violatedDirective), { once: true });
      const el = document.createElement("script");
      el.src = ${src};
      el.onload = () => resolve("loaded");
      document.head.append(el);
    })`);
    expect(blocked).toMatch(/^script-src/);
    expect(await tab.title()).not.toBe("pwned");
    expect(browser.requests.filter((r) => r.url.includes("pwned"))).toEqual([]);
    await tab.close();
  }, 60_000);

  it("never lets an uploaded HTML or SVG file run script in the vault's origin", async () => {
    const cap = vault.rootCapUrl;
    const beacon = (tag: string) => `fetch('/pwned-${tag}');document.title='pwned'`;
    const html = `<html><body><script>${beacon("html")}</script><img src=x onerror="${beacon("onerror")}"></body></html>`;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="${beacon("svg-onload")}"><script>${beacon("svg")}</script><rect width="40" height="40" fill="red"/></svg>`;
    for (const [name, body, type] of [
      ["evil.html", html, "text/html"],
      ["evil.svg", svg, "image/svg+xml"],
    ]) {
      const res = await fetch(`${cap}/file?path=${name}`, { method: "PUT", body, headers: { "content-type": type! } });
      expect(res.status).toBe(201);
    }
    const page = await browser.context.newPage();
    await page.goto(`${vault.url}/ui#${tokenOf(cap)}`);
    // Previewed in the console: the HTML as text, the SVG as an image.
    await page.locator("button.file", { hasText: "evil.html" }).click();
    await page.locator("pre.text .line").first().waitFor();
    expect(await page.locator("pre.text").textContent()).toContain("<script>");
    await page.locator("button.file", { hasText: "evil.svg" }).click();
    const img = page.locator(".preview img");
    await img.waitFor();
    await expect
      .poll(() => img.evaluate((el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth))
      .toBe(40);
    await shot(page, "10-svg-preview");
    // Opened directly, as a link to the file would be: served sandboxed, so no script runs.
    for (const name of ["evil.html", "evil.svg"]) {
      const direct = await browser.context.newPage();
      await direct.goto(`${cap}/file?path=${name}`);
      await direct.waitForLoadState("load");
      expect(await direct.title()).not.toBe("pwned");
      await direct.close();
    }
    expect(await page.title()).not.toBe("pwned");
    expect(browser.requests.filter((r) => r.url.includes("pwned"))).toEqual([]);
  }, 60_000);
});
