import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

/**
 * The web console end to end, in Debian's real Chromium (never a downloaded
 * browser) against the real launcher. One flow, step by step as a person
 * would use it, with a screenshot of each step in tmp/console-e2e/. Every
 * request the browser makes is recorded, to prove the token reaches the
 * server only inside the API calls.
 */
const CHROMIUM = "/usr/bin/chromium";
const SHOTS = path.join(PROJECT_ROOT, "tmp/console-e2e");
const BIG = 20 * 1024 * 1024;
const TEXT = "# Field notes\nfirst line\n<b>not bold</b>\nlast line\n";

let vault: TestVault;
let context: BrowserContext;
let profile: string;
let files: string;
const requests: { url: string; referer: string | undefined }[] = [];
const pageErrors: string[] = [];

const tokenOf = (capUrl: string) => capUrl.slice(capUrl.lastIndexOf("/") + 1);
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  vault = await startTestVault();
  files = await mkdtemp(path.join(os.tmpdir(), "capvault-console-files-"));
  profile = await mkdtemp(path.join(os.tmpdir(), "capvault-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1100, height: 760 },
  });
  context.setDefaultTimeout(20_000);
  context.on("request", (r) => requests.push({ url: r.url(), referer: r.headers().referer }));
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  // Anything the console's own policy blocks is a bug in the console (the init script itself is exempt).
  await context.addInitScript(
    "addEventListener('securitypolicyviolation', (e) => (window.cspViolations ??= []).push(e.violatedDirective))",
  );
}, 120_000);

afterAll(async () => {
  await context?.close();
  await vault?.stop();
  await rm(profile, { recursive: true, force: true });
  await rm(files, { recursive: true, force: true });
});

/**
 * The token is neither in the address bar nor in any entry of the tab's
 * session history (what Back, Forward and a restored tab would show).
 */
async function expectNoTokenInHistory(page: Page, token: string): Promise<void> {
  expect(await page.evaluate("location.hash")).toBe("");
  expect(page.url()).not.toContain(token);
  const cdp = await page.context().newCDPSession(page);
  try {
    const { entries } = (await cdp.send("Page.getNavigationHistory")) as { entries: { url: string }[] };
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.url).not.toContain(token);
  } finally {
    await cdp.detach();
  }
}

describe("web console in Chromium", () => {
  it("browses, uploads, previews, shares read-only, and revokes, with the token only in API calls", async () => {
    const consoleUrl = /^default console: (\S+)$/m.exec(vault.output())?.[1];
    expect(consoleUrl).toBe(`${vault.url}/ui#${tokenOf(vault.rootCapUrl)}`);
    const rootToken = tokenOf(vault.rootCapUrl);
    const page = await context.newPage();
    const dialogs: string[] = [];
    let answer = ""; // what the next prompt() is answered
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.accept(d.type() === "prompt" ? answer : undefined);
    });

    // 1. The root cap's console: header and every control its rights allow.
    await page.goto(consoleUrl!);
    await page.locator("#cap-header .facts").waitFor();
    expect(await page.locator("#cap-header .badge").allTextContents()).toEqual([
      "read",
      "write",
      "delete",
      "list",
      "subdir",
    ]);
    await shot(page, "01-root");
    // The token was taken out of the address bar and the page's history entry as soon as it was read.
    await expectNoTokenInHistory(page, rootToken);

    // 2. Upload a text file and a 20 MiB file through the file input.
    await writeFile(path.join(files, "notes.txt"), TEXT);
    await writeFile(path.join(files, "big.bin"), Buffer.alloc(BIG, 7));
    await page.setInputFiles("#upload-input", [path.join(files, "notes.txt"), path.join(files, "big.bin")]);
    await page.locator("button.file", { hasText: "big.bin" }).waitFor();
    await page.locator("button.file", { hasText: "notes.txt" }).waitFor();
    const stat = (await (await fetch(`${vault.rootCapUrl}/stat?path=big.bin`)).json()) as { size: number };
    expect(stat.size).toBe(BIG);
    await expect.poll(() => page.locator("tr", { hasText: "big.bin" }).textContent()).toContain("20 MiB");

    // 3. Preview the text: line by line, markup shown as text.
    await page.locator("button.file", { hasText: "notes.txt" }).click();
    await page.locator("pre.text .line").first().waitFor();
    expect(await page.locator("pre.text .line").allTextContents()).toEqual(TEXT.split("\n").slice(0, -1));
    expect(await page.locator("pre.text b").count()).toBe(0);
    await shot(page, "02-file-browser");
    // A refused action shows the vault's own message.
    answer = "../outside.txt";
    await page.locator("tr", { hasText: "notes.txt" }).locator("text=Rename").click();
    await page.locator("#status.error", { hasText: "Refused: path escapes (path_escapes)" }).waitFor();

    // 4. A new folder is made in storage: still there, empty, after the page is loaded again, and removed when asked.
    await page.fill("input[name=folder]", "drafts");
    await page.click("text=New folder");
    await page.locator(".crumbs [aria-current]", { hasText: "drafts" }).waitFor();
    await page.locator("td.empty", { hasText: "This folder is empty." }).waitFor();
    await page.goto("about:blank");
    await page.goto(consoleUrl!);
    const drafts = page.locator("tr", { has: page.locator("button.dir", { hasText: "drafts/" }) });
    await drafts.locator("text=Remove folder").click();
    await page.locator("#status.ok", { hasText: "Removed the empty folder drafts/" }).waitFor();
    await page.locator("button.file", { hasText: "notes.txt" }).waitFor();
    expect(await page.locator("button.dir", { hasText: "drafts/" }).count()).toBe(0);
    const root = (await (await fetch(`${vault.rootCapUrl}/list?path=`)).json()) as { entries: { name: string }[] };
    expect(root.entries.map((e) => e.name)).not.toContain("drafts");

    // 5. A folder with a file in it, which Remove folder refuses to take.
    await page.fill("input[name=folder]", "reports");
    await page.click("text=New folder");
    await page.locator(".crumbs [aria-current]", { hasText: "reports" }).waitFor();
    // Dropped on the list, as a file dragged from the desktop would be.
    await page.evaluate(`(() => {
      const files = new DataTransfer();
      files.items.add(new File(["# Summary\\n"], "summary.md", { type: "text/markdown" }));
      const drop = new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true });
      document.querySelector(".zone").dispatchEvent(drop);
    })()`);
    await page.locator("button.file", { hasText: "summary.md" }).waitFor();
    await shot(page, "03-folder");
    await page.locator(".crumbs button", { hasText: /./ }).first().click();
    await page
      .locator("tr", { has: page.locator("button.dir", { hasText: "reports/" }) })
      .locator("text=Remove folder")
      .click();
    await page.locator("#status.error", { hasText: "Refused: that folder is not empty (conflict)" }).waitFor();
    await page.locator("button.dir", { hasText: "reports/" }).click();
    await page.locator(".crumbs [aria-current]", { hasText: "reports" }).waitFor();

    // 6. Share it read-only (read and list) for one hour.
    await page.click("text=Share this folder");
    expect(await page.inputValue("#share-path")).toBe("reports");
    for (const right of ["write", "delete", "subdir"]) await page.uncheck(`input[name=rights][value=${right}]`);
    await page.selectOption("#share-ttl", "3600");
    await page.fill("#share-label", "reader agent");
    await page.click("text=Create cap");
    const childConsole = await page.locator("#minted-console").inputValue();
    const childUrl = await page.locator("#minted-url").inputValue();
    const childToken = tokenOf(childUrl);
    expect(childConsole).toBe(`${vault.url}/ui#${childToken}`);
    expect(await page.locator("#minted-config").textContent()).toContain(`${childUrl}/mcp`);
    await shot(page, "04-share");

    // 7. The child's console: read-only, one hour, no write controls; a forced write is refused.
    const child = await context.newPage();
    await child.goto(childConsole);
    await child.locator("#cap-header h1", { hasText: "reader agent" }).waitFor();
    expect(await child.locator("#cap-header .badge").allTextContents()).toEqual(["read", "list"]);
    expect(await child.locator("#cap-header .expiry").textContent()).toMatch(/expires in (1 hour|59 minutes) \(/);
    await child.locator("button.file", { hasText: "summary.md" }).waitFor();
    await expectNoTokenInHistory(child, childToken);
    for (const control of [
      "#upload-input",
      "input[name=folder]",
      "text=Rename",
      "text=Delete",
      "text=Remove folder",
      "#tab-share",
    ]) {
      expect(await child.locator(control).count(), control).toBe(0);
    }
    const forced = await child.evaluate(async (token) => {
      const res = await fetch(`/object/${token}/file?path=forced.txt`, { method: "PUT", body: "x" });
      return { status: res.status, body: await res.json() };
    }, childToken);
    expect(forced).toEqual({
      status: 403,
      body: { error: { code: "forbidden", message: "this operation needs the write right" } },
    });
    await shot(child, "05-child");

    // The same console opened by pasting the cap into the form at plain /ui: the token never enters a URL,
    // so the page adds no history entry (a link's #<token> is recorded as it opens, before any script runs).
    const pasted = await context.newPage();
    await pasted.goto(`${vault.url}/ui`);
    const entries = await pasted.evaluate("history.length");
    await pasted.fill("#cap-input", childUrl);
    await pasted.click("text=Open");
    await pasted.locator("#cap-header h1", { hasText: "reader agent" }).waitFor();
    expect(await pasted.evaluate("history.length")).toBe(entries);
    await expectNoTokenInHistory(pasted, childToken);
    await pasted.close();

    // 8. The parent's delegation view (with a deeper branch minted through the API), then revoke
    // the child there (after a confirmation).
    const mint = async (capUrl: string, grant: object) =>
      (await (await fetch(`${capUrl}/subdir`, { method: "POST", body: JSON.stringify(grant) })).json()) as {
        url: string;
      };
    const hermes = await mint(vault.rootCapUrl, {
      path: "skills",
      label: "hermes",
      rights: ["read", "write", "list", "subdir"],
    });
    await mint(hermes.url, {
      path: "drafts",
      label: "hermes sub-agent",
      rights: ["read", "write"],
      ttlSeconds: 86_400,
    });
    await page.click("#tab-delegation");
    const node = page.locator(".node", { hasText: "reader agent" });
    await node.waitFor();
    await page.locator(".node", { hasText: "hermes sub-agent" }).waitFor();
    await shot(page, "06-delegation");
    await node.locator("text=Revoke").click();
    await page.locator(".node", { hasText: "reader agent" }).waitFor({ state: "detached" });
    expect(dialogs.at(-1)).toMatch(/^Revoke "reader agent"/);
    // A grandchild, too: the button on every node revokes that cap, and its parent stays.
    await page.locator(".node", { hasText: "hermes sub-agent" }).locator("text=Revoke").click();
    await page.locator(".node", { hasText: "hermes sub-agent" }).waitFor({ state: "detached" });
    expect(await page.locator(".node", { hasText: "hermes" }).count()).toBe(1);

    // 9. The child's console now shows the one page for dead caps, the same as for an unknown one.
    // (Opened afresh: the page keeps no token, so a reload would ask for one.)
    const openFresh = async (url: string) => {
      await child.goto("about:blank");
      await child.goto(url);
      await child.locator(".gone").waitFor();
    };
    await openFresh(childConsole);
    const revokedPage = await child.locator("body").innerHTML();
    await openFresh(`${vault.url}/ui#${"a".repeat(48)}`);
    expect(await child.locator("body").innerHTML()).toBe(revokedPage);
    // Not a token at all: `..` would resolve /object/.. to another route; it is an unknown cap too.
    await openFresh(`${vault.url}/ui#..`);
    expect(await child.locator("body").innerHTML()).toBe(revokedPage);
    await shot(child, "07-revoked");

    // 10. The audit tab: newest first, a reach past the root highlighted.
    await fetch(`${vault.rootCapUrl}/file?path=../escape`);
    await page.click("#tab-audit");
    await page.locator("tr.refused", { hasText: "../escape" }).waitFor();
    const ops = await page.locator("table.audit tbody tr td:nth-child(2)").allTextContents();
    expect(ops.slice(0, 2)).toEqual(["read", "revoke_child"]);
    await shot(page, "08-audit");

    // Phone width: nothing runs off the side.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.click("#tab-files");
    await page.locator("button.file", { hasText: "notes.txt" }).waitFor();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot(page, "09-phone");

    // No script error, nothing the policy had to block, nothing kept in the browser, and no URL but an
    // API call's ever held a token.
    expect(pageErrors).toEqual([]);
    for (const p of [page, child]) {
      expect(await p.evaluate("window.cspViolations ?? []")).toEqual([]);
      expect(await p.evaluate("[localStorage.length, sessionStorage.length, document.cookie]")).toEqual([0, 0, ""]);
    }
    for (const token of [rootToken, childToken]) {
      expect(requests.filter((r) => r.url.startsWith(`${vault.url}/object/${token}`)).length).toBeGreaterThan(1);
      for (const { url, referer } of requests) {
        // The fragment of a navigation is the browser's own: it never goes on the wire.
        const sent = url.split("#")[0]!;
        if (sent.includes(token))
          expect(sent.startsWith(`${vault.url}/object/${token}/`) || sent === `${vault.url}/object/${token}`).toBe(
            true,
          );
        expect(referer ?? "").not.toContain(token);
      }
    }
    expect(requests.some((r) => r.url.startsWith(`${vault.url}/ui/console.js`))).toBe(true);
  }, 60_000);

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
    const tab = await context.newPage();
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
    expect(requests.filter((r) => r.url.includes("pwned"))).toEqual([]);
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
    const page = await context.newPage();
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
      const direct = await context.newPage();
      await direct.goto(`${cap}/file?path=${name}`);
      await direct.waitForLoadState("load");
      expect(await direct.title()).not.toBe("pwned");
      await direct.close();
    }
    expect(await page.title()).not.toBe("pwned");
    expect(requests.filter((r) => r.url.includes("pwned"))).toEqual([]);
  }, 60_000);

  it("shows a file's history, restores, redacts and undoes; shares read-only for a day by default", async () => {
    const root = vault.rootCapUrl;
    const me = (await (await fetch(root)).json()) as { id: string };
    const put = async (cap: string, p: string, body: string) =>
      expect((await fetch(`${cap}/file?path=${p}`, { method: "PUT", body })).ok).toBe(true);
    const text = async (p: string) => {
      const res = await fetch(`${root}/file?path=${p}`);
      return res.ok ? res.text() : res.status;
    };
    const mint = async (cap: string, grant: object) =>
      (await (await fetch(`${cap}/subdir`, { method: "POST", body: JSON.stringify(grant) })).json()) as {
        url: string;
        token: string;
      };
    await put(root, "hist/a.txt", "v1\n");
    await put(root, "hist/a.txt", "v2\n");
    await put(root, "hist/b.txt", "bee\n");
    for (let i = 1; i <= 16; i++) await put(root, `hist/f${String(i).padStart(2, "0")}.txt`, `file ${i}\n`);
    await put(root, "hist/zz-last.txt", "the last one\n");
    const page = await context.newPage();
    const dialogs: string[] = [];
    let answer = "";
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.accept(d.type() === "prompt" ? answer : undefined);
    });
    await page.goto(`${vault.url}/ui#${tokenOf(root)}`);
    // The header tells how much the cap holds and against which quota.
    await expect.poll(() => page.locator("#cap-header dd.usage").textContent()).toMatch(/ files? \(no quota\)$/);
    await page.locator("button.dir", { hasText: "hist/" }).click();
    const rowOf = (name: string) =>
      page.locator("table.entries tr", { has: page.locator("button.file", { hasText: name }) });

    // A preview opened from the bottom of a long folder is in view, not below the fold.
    await page.locator("button.file", { hasText: "zz-last.txt" }).click();
    await page.locator(".preview pre.text .line", { hasText: "the last one" }).waitFor();
    const box = (await page.locator(".preview").boundingBox())!;
    const viewport = page.viewportSize()!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + Math.min(box.height, 100)).toBeLessThanOrEqual(viewport.height);
    await page.screenshot({ path: path.join(SHOTS, "11-preview-in-view.png") });

    // History: newest first, who did it, view an old version, restore it, redact another.
    await rowOf("a.txt").locator("text=History").click();
    const versions = page.locator(".history tr[data-version]");
    await expect.poll(() => versions.count()).toBe(2);
    expect(await page.locator(".history .op").allTextContents()).toEqual(["modified", "created"]);
    expect(await versions.first().textContent()).toContain("this cap");
    await versions.last().locator("text=View").click();
    await page.locator(".version-view pre.text .line", { hasText: "v1" }).waitFor();
    await versions.last().locator("text=Restore").click();
    await expect.poll(() => versions.count()).toBe(3);
    expect(await text("hist/a.txt")).toBe("v1\n");
    const v2 = (await versions.nth(1).getAttribute("data-version"))!;
    await versions.nth(1).locator("text=Redact").click();
    await page.locator(`.history tr[data-version="${v2}"] .badge`, { hasText: "redacted" }).waitFor();
    expect(dialogs.at(-1)).toMatch(/^Destroy the bytes of version/);
    const listed = (await (await fetch(`${root}/versions?path=hist/a.txt`)).json()) as {
      versions: { id: string; redacted: boolean; actor: string }[];
    };
    expect(listed.versions.find((v) => v.id === v2)?.redacted).toBe(true);
    expect(listed.versions.every((v) => v.actor === me.id)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, "12-history.png") });

    // Undo right after a delete, through the versions API; the status line sits above the view.
    const undo = page.locator("#status button.undo");
    await rowOf("a.txt").locator("text=Delete").click();
    await undo.waitFor();
    expect(dialogs.at(-1)).not.toContain("cannot be undone");
    expect(await text("hist/a.txt")).toBe(404);
    const status = (await page.locator("#status").boundingBox())!;
    expect(status.y).toBeLessThan((await page.locator("#view").boundingBox())!.y);
    await page.screenshot({ path: path.join(SHOTS, "13-undo.png") });
    await undo.click();
    await page.locator("#status", { hasText: "Undone" }).waitFor();
    expect(await text("hist/a.txt")).toBe("v1\n");
    // ... after an overwrite by upload,
    await writeFile(path.join(files, "a.txt"), "v3\n");
    // Each upload's row says its percent (the spec ends every upload with a progress event at 100%).
    await page.evaluate(`(() => {
      window.progressSeen = [];
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) {
          const el = n.nodeType === 1 ? n.querySelector(".progress-text") : n.parentElement;
          if (el?.classList.contains("progress-text")) window.progressSeen.push(el.textContent);
        }
      }).observe(document.querySelector(".uploads"), { childList: true, subtree: true });
    })()`);
    await page.setInputFiles("#upload-input", [path.join(files, "a.txt")]);
    await page.locator("#status", { hasText: "replacing" }).waitFor();
    const seen = (await page.evaluate("window.progressSeen")) as string[];
    expect([seen[0], seen.at(-1)]).toEqual(["0%", "100%"]);
    expect(await text("hist/a.txt")).toBe("v3\n");
    await undo.click();
    await page.locator("#status", { hasText: "Undone" }).waitFor();
    expect(await text("hist/a.txt")).toBe("v1\n");
    // ... and after a move.
    answer = "hist/b2.txt";
    await rowOf("b.txt").locator("text=Rename").click();
    await undo.waitFor();
    expect(await text("hist/b.txt")).toBe(404);
    await undo.click();
    await page.locator("#status", { hasText: "back to hist/b.txt" }).waitFor();
    expect([await text("hist/b.txt"), await text("hist/b2.txt")]).toEqual(["bee\n", 404]);
    // The status line is about the folder it was said in: another folder starts with none.
    await page.locator(".crumbs button", { hasText: "root" }).click();
    await page.locator("button.dir", { hasText: "hist/" }).waitFor();
    expect(await page.locator("#status").textContent()).toBe("");

    // Share starts safe: read and list, for a day, with a label; more is a deliberate tick.
    await page.click("#tab-share");
    const ticked = await page
      .locator("input[name=rights]:checked")
      .evaluateAll((els) => els.map((el) => (el as unknown as { value: string }).value));
    expect(ticked).toEqual(["read", "list"]);
    expect(await page.inputValue("#share-ttl")).toBe("86400");
    expect(await page.inputValue("#share-label")).not.toBe("");
    await page.fill("#share-path", "hist");
    await page.check("#share-history");
    await page.click("text=Create cap");
    const shared = await page.locator("#minted-console").inputValue();
    expect(await page.locator(".minted p").first().textContent()).toMatch(/: read, list; expires tomorrow/);

    // Minted with the earlier history, the child sees it, and may not restore or redact (read and list only).
    const child = await context.newPage();
    await child.goto(shared);
    await child.locator("button.file", { hasText: "a.txt" }).waitFor();
    await child.locator("table.entries tr", { hasText: "a.txt" }).locator("text=History").click();
    await expect.poll(() => child.locator(".history tr[data-version]").count()).toBeGreaterThan(3);
    expect(await child.locator(".history button", { hasText: /^Restore$/ }).count()).toBe(0);
    expect(await child.locator(".history button", { hasText: /^Redact$/ }).count()).toBe(0);
    // Minted without it, a child sees no version from before its mint.
    const blind = await mint(root, { path: "hist", rights: ["read", "list"], ttlSeconds: 600 });
    await child.goto("about:blank");
    await child.goto(`${vault.url}/ui#${blind.token}`);
    await child.locator("table.entries tr", { hasText: "a.txt" }).locator("text=History").click();
    await child.locator(".history td.empty", { hasText: "No versions this cap may see." }).waitFor();

    // A write-only drop box says where to drop, and takes what is dropped there.
    const inbox = await mint(root, { path: "inbox", rights: ["write"], ttlSeconds: 600 });
    await child.goto("about:blank");
    await child.goto(`${vault.url}/ui#${inbox.token}`);
    await child.locator(".dropbox").waitFor();
    expect(await child.locator(".toolbar .hint").textContent()).not.toContain("list");
    await child.evaluate(`(() => {
      const files = new DataTransfer();
      files.items.add(new File(["dropped\\n"], "drop.txt", { type: "text/plain" }));
      document.querySelector(".zone").dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
    })()`);
    await child.locator("#status", { hasText: "Uploaded drop.txt" }).waitFor();
    expect(await text("inbox/drop.txt")).toBe("dropped\n");
    await child.screenshot({ path: path.join(SHOTS, "14-drop-box.png") });

    // The page for a cap that is not available has a way back.
    await child.goto("about:blank");
    await child.goto(`${vault.url}/ui#${"b".repeat(48)}`);
    await child.locator(".gone a", { hasText: "Open another cap" }).click();
    await child.locator("#cap-input").waitFor();
    await child.close();

    // Delegation: unlabelled caps are named by what they reach, branches fold, a filter finds one.
    for (let i = 0; i < 13; i++) await mint(root, { path: "hist", rights: ["read"], ttlSeconds: 600 });
    const needle = await mint(root, { path: "hist", label: "needle", rights: ["read", "subdir"], ttlSeconds: 600 });
    await mint(needle.url, { path: "", label: "needle kid", rights: ["read"] });
    await page.click("#tab-delegation");
    await page.locator(".node", { hasText: "needle" }).first().waitFor();
    expect(await page.locator(".tree-view").textContent()).not.toContain("(no label)");
    expect(await page.locator(".node .unlabelled").first().textContent()).toMatch(/^hist\/: read/);
    expect(await page.locator(".node", { hasText: "needle kid" }).isVisible()).toBe(false);
    await page.fill("#tree-filter", "needle");
    await page.locator(".node", { hasText: "needle kid" }).waitFor();
    expect(await page.locator(".node:visible").count()).toBe(3);
    await page.screenshot({ path: path.join(SHOTS, "15-delegation-filter.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate("window.cspViolations ?? []")).toEqual([]);
    await page.close();
  }, 60_000);
});
