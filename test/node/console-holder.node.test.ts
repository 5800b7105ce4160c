import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap, HolderKey } from "../../clients/typescript/index.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/**
 * The console with holder-bound caps (issue 20), in Debian's real Chromium
 * against the real launcher: the console's own key in IndexedDB, a cap bound
 * to it opened and used there, its shares bound too, and the same cap refused
 * in another browser context (another key). The node project's shared vault
 * (a root of this file's own), one browser, two contexts; screenshots in
 * tmp/console-e2e/.
 */
const CHROMIUM = "/usr/bin/chromium";
const SHOTS = path.join(PROJECT_ROOT, "tmp/console-e2e");
const TEXT = "bound notes\nsecond line\n";

let vault: SharedVault;
let browser: Browser;
let files: string;
const contexts: BrowserContext[] = [];
const proofs: string[] = [];
const requestUrls: string[] = [];
const pageErrors: string[] = [];

const tokenOf = (capUrl: string) => capUrl.slice(capUrl.lastIndexOf("/") + 1);
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  context.setDefaultTimeout(20_000);
  context.on("request", (r) => {
    requestUrls.push(r.url());
    const proof = r.headers().dpop;
    if (proof) proofs.push(proof);
  });
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  await context.addInitScript(
    "addEventListener('securitypolicyviolation', (e) => (window.cspViolations ??= []).push(e.violatedDirective))",
  );
  contexts.push(context);
  return context;
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  vault = await sharedVault("console-holder");
  files = await mkdtemp(path.join(os.tmpdir(), "capvault-console-holder-"));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
  });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  if (files) await rm(files, { recursive: true, force: true });
});

/** The console's key as its Key panel shows it (made on first showing). */
async function shownKey(page: Page): Promise<{ jwk: Record<string, string>; jkt: string }> {
  await page.goto(`${vault.url}/ui`);
  await page.click("#show-key");
  await page.locator("#console-jkt").waitFor();
  const jwk = JSON.parse(await page.inputValue("#console-jwk")) as Record<string, string>;
  return { jwk, jkt: (await page.locator("#console-jkt").textContent()) ?? "" };
}

/** Opens a cap through the console's form, which puts the token in no URL at all. */
async function openCap(page: Page, token: string): Promise<void> {
  await page.goto(`${vault.url}/ui`);
  await page.fill("#cap-input", token);
  await page.click("text=Open");
}

/** The console's stored private key: whether it is a non-extractable CryptoKey, and what exporting it does. */
const KEY_PROBE = `new Promise((resolve, reject) => {
  const open = indexedDB.open("capvault-console");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const get = open.result.transaction("holder-keys").objectStore("holder-keys").get("console");
    get.onsuccess = async () => {
      const key = get.result.privateKey;
      const exported = await crypto.subtle.exportKey("jwk", key).then(() => "exported", (e) => e.name);
      resolve({ isKey: key instanceof CryptoKey, type: key.type, extractable: key.extractable, exported,
        localStorage: localStorage.length, sessionStorage: sessionStorage.length });
    };
  };
})`;

async function mintBoundRoot(jwk: unknown): Promise<string> {
  const response = await fetch(`${vault.url}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${vault.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      backend: "r2",
      prefix: `console-holder-${randomUUID()}/`,
      label: "bound root",
      holder: jwk,
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

describe("the console with holder-bound caps, in Chromium", () => {
  it("keeps its own key, opens and shares caps bound to it, and another browser's key opens nothing", async () => {
    const a = await newContext();
    const page = await a.newPage();
    let answer = ""; // what the next prompt() is answered; every confirm() is accepted
    page.on("dialog", (d) => void d.accept(d.type() === "prompt" ? answer : undefined));

    // 1. The console shows its public key (Ed25519: Chromium's WebCrypto has it) and thumbprint.
    const { jwk, jkt } = await shownKey(page);
    expect(jwk).toEqual({ kty: "OKP", crv: "Ed25519", x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await shot(page, "holder-01-key");

    // 2. A root bound to that key: its URL alone opens nothing; in this console it lists, writes and reads.
    const token = await mintBoundRoot(jwk);
    expect((await fetch(`${vault.url}/object/${token}`)).status).toBe(404);
    await openCap(page, token);
    await page.locator("#cap-header .holder", { hasText: `bound to this console's key ${jkt}` }).waitFor();
    await page.locator("td.empty", { hasText: "This folder is empty." }).waitFor();
    await writeFile(path.join(files, "notes.txt"), TEXT);
    await page.setInputFiles("#upload-input", [path.join(files, "notes.txt")]);
    await page.locator("button.file", { hasText: "notes.txt" }).click();
    await page.locator("pre.text .line").first().waitFor();
    expect(await page.locator("pre.text .line").allTextContents()).toEqual(["bound notes", "second line"]);
    await page.locator("tr", { hasText: "notes.txt" }).locator("text=History").click();
    await page.locator(".history .op", { hasText: "created" }).waitFor();
    await page.fill("input[name=folder]", "drafts");
    await page.click("text=New folder");
    await page.locator(".crumbs [aria-current]", { hasText: "drafts" }).waitFor();
    await shot(page, "holder-02-bound-root");

    // 3. After a reload the key is the same one, from IndexedDB, and still not extractable; nothing else is stored.
    await page.reload();
    expect((await shownKey(page)).jkt).toBe(jkt);
    expect(await page.evaluate(KEY_PROBE)).toEqual({
      isKey: true,
      type: "private",
      extractable: false,
      exported: "InvalidAccessError",
      localStorage: 0,
      sessionStorage: 0,
    });
    await openCap(page, token);
    await page.locator("button.file", { hasText: "notes.txt" }).waitFor();

    // 4. Share from the bound cap: bound to this console's key by default (no bearer choice is offered).
    await page.click("#tab-share");
    expect(await page.locator("#share-holder-bearer").count()).toBe(0);
    expect(await page.isChecked("#share-holder-console")).toBe(true);
    await page.fill("#share-label", "bound child");
    await page.click("text=Create cap");
    await page.locator("#minted-bound", { hasText: "Bound to this console's key" }).waitFor();
    const childToken = tokenOf(await page.locator("#minted-url").inputValue());
    expect((await fetch(`${vault.url}/object/${childToken}`)).status).toBe(404);
    const child = await a.newPage();
    await child.goto(await page.locator("#minted-console").inputValue());
    await child.locator("#cap-header h1", { hasText: "bound child" }).waitFor();
    await child.locator("#cap-header .holder", { hasText: `bound to this console's key ${jkt}` }).waitFor();
    await child.locator("button.file", { hasText: "notes.txt" }).waitFor();

    // 5. Share to a named holder: the child is bound to the pasted key, and that key's owner opens it.
    const named = await HolderKey.generate();
    await page.click("#tab-share");
    await page.check("#share-holder-named");
    await page.fill("#share-holder-jwk", JSON.stringify(named.publicJwk));
    await page.fill("#share-label", "for a named holder");
    await page.click("text=Create cap");
    await page.locator("#minted-bound", { hasText: "Bound to the named holder's key" }).waitFor();
    const namedUrl = await page.locator("#minted-url").inputValue();
    expect((await fetch(namedUrl)).status).toBe(404);
    const info = await new FsCap(namedUrl, { holder: named }).info();
    expect(info.holder).toEqual({ jkt: named.jkt });
    expect(info.label).toBe("for a named holder");
    await shot(page, "holder-03-share-named");

    // 6. Delete with Undo (a restore), rename, revoke from the delegation tree and the audit: all signed.
    await page.click("#tab-files");
    await page.locator("tr", { hasText: "notes.txt" }).locator("text=Delete").click();
    await page.locator("#status.ok", { hasText: "Deleted notes.txt" }).locator("text=Undo").click();
    await page.locator("#status.ok", { hasText: "Undone" }).waitFor();
    await page.locator("button.file", { hasText: "notes.txt" }).waitFor();
    answer = "renamed.txt";
    await page.locator("tr", { hasText: "notes.txt" }).locator("text=Rename").click();
    await page.locator("button.file", { hasText: "renamed.txt" }).waitFor();
    await page.click("#tab-delegation");
    await page.locator(".node", { hasText: "for a named holder" }).locator("text=Revoke").click();
    await page.locator(".node", { hasText: "for a named holder" }).waitFor({ state: "detached" });
    await expect(new FsCap(namedUrl, { holder: named }).info()).rejects.toMatchObject({ code: "no_such_cap" });
    await page.click("#tab-audit");
    await page.locator("table.audit td", { hasText: "revoke_child" }).first().waitFor();

    // 7. A second browser context has another key: the same cap is refused there like an unknown one.
    const b = await newContext();
    const other = await b.newPage();
    const otherKey = await shownKey(other);
    expect(otherKey.jkt).not.toBe(jkt);
    await openCap(other, token);
    await other.locator(".gone h1", { hasText: "This capability is not available" }).waitFor();
    await shot(other, "holder-04-other-key");
    // Its person shows its key; the parent's console shares to it, and the child opens there and only there.
    await page.click("#tab-share");
    await page.check("#share-holder-named");
    await page.fill("#share-holder-jwk", JSON.stringify(otherKey.jwk));
    await page.fill("#share-label", "for the other browser");
    await page.click("text=Create cap");
    await page.locator("#minted-bound", { hasText: "Bound to the named holder's key" }).waitFor();
    const sharedToken = tokenOf(await page.locator("#minted-url").inputValue());
    await openCap(other, sharedToken);
    await other.locator("#cap-header .holder", { hasText: `bound to this console's key ${otherKey.jkt}` }).waitFor();
    await other.locator("button.file", { hasText: "renamed.txt" }).waitFor();
    await openCap(page, sharedToken);
    await page.locator(".gone h1", { hasText: "This capability is not available" }).waitFor();

    // 8. Every request through the bound caps carried a proof, and no proof or token is in any URL the browser kept.
    expect(proofs.length).toBeGreaterThan(10);
    expect(new Set(proofs).size).toBe(proofs.length);
    for (const p of [page, child, other]) {
      const cdp = await p.context().newCDPSession(p);
      const { entries } = (await cdp.send("Page.getNavigationHistory")) as { entries: { url: string }[] };
      await cdp.detach();
      for (const url of [p.url(), ...entries.map((e) => e.url)]) {
        expect(url).not.toContain(token);
        expect(url).not.toContain(childToken);
        expect(url).not.toContain(sharedToken);
        for (const proof of proofs) expect(url).not.toContain(proof.slice(-43));
      }
    }
    for (const url of requestUrls) for (const proof of proofs) expect(url).not.toContain(proof.slice(-43));
    for (const p of [page, child, other]) expect(await p.evaluate("window.cspViolations ?? []")).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
