import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  acceptDialogs,
  type ConsoleBrowser,
  expectNoTokenInHistory,
  listSettled,
  openConsoleBrowser,
  painted,
  shot,
  tokenOf,
} from "./console-browser.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

/**
 * The web console end to end, in Debian's real Chromium against the real
 * launcher: one flow, step by step as a person would use it, with a
 * screenshot of each step in tmp/console-e2e/. Every request the browser
 * makes is recorded, to prove the token reaches the server only inside the
 * API calls. A vault of its own: the flow starts at the console URL the
 * launcher prints. The console's scripts policy is in
 * console-scripts.node.test.ts, history, Undo and sharing defaults in
 * console-history.node.test.ts.
 */
const BIG = 20 * 1024 * 1024;
const TEXT = "# Field notes\nfirst line\n<b>not bold</b>\nlast line\n";

let vault: TestVault;
let browser: ConsoleBrowser;
let files: string;

beforeAll(async () => {
  vault = await startTestVault();
  files = await mkdtemp(path.join(os.tmpdir(), "capvault-console-files-"));
  browser = await openConsoleBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await vault?.stop();
  await rm(files, { recursive: true, force: true });
});

describe("web console in Chromium", () => {
  it("browses, uploads, previews, shares read-only, and revokes, with the token only in API calls", async () => {
    const consoleUrl = /^default console: (\S+)$/m.exec(vault.output())?.[1];
    expect(consoleUrl).toBe(`${vault.url}/ui#${tokenOf(vault.rootCapUrl)}`);
    const rootToken = tokenOf(vault.rootCapUrl);
    const page = await browser.context.newPage();
    const { dialogs, answer } = acceptDialogs(page); // answer.next: what the next prompt() is answered

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
    await painted(() => page.locator("tr", { hasText: "big.bin" }).textContent()).toContain("20 MiB");

    // 3. Preview the text: line by line, markup shown as text.
    await page.locator("button.file", { hasText: "notes.txt" }).click();
    await page.locator("pre.text .line").first().waitFor();
    expect(await page.locator("pre.text .line").allTextContents()).toEqual(TEXT.split("\n").slice(0, -1));
    expect(await page.locator("pre.text b").count()).toBe(0);
    await shot(page, "02-file-browser");
    // A refused action shows the vault's own message.
    answer.next = "../outside.txt";
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
    // The rows before the removal stay shown (marked busy) until the reload it started answers.
    await listSettled(page);
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
    const child = await browser.context.newPage();
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
    const pasted = await browser.context.newPage();
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
    expect(browser.pageErrors).toEqual([]);
    for (const p of [page, child]) {
      expect(await p.evaluate("window.cspViolations ?? []")).toEqual([]);
      expect(await p.evaluate("[localStorage.length, sessionStorage.length, document.cookie]")).toEqual([0, 0, ""]);
    }
    for (const token of [rootToken, childToken]) {
      expect(browser.requests.filter((r) => r.url.startsWith(`${vault.url}/object/${token}`)).length).toBeGreaterThan(
        1,
      );
      for (const { url, referer } of browser.requests) {
        // The fragment of a navigation is the browser's own: it never goes on the wire.
        const sent = url.split("#")[0]!;
        if (sent.includes(token))
          expect(sent.startsWith(`${vault.url}/object/${token}/`) || sent === `${vault.url}/object/${token}`).toBe(
            true,
          );
        expect(referer ?? "").not.toContain(token);
      }
    }
    expect(browser.requests.some((r) => r.url.startsWith(`${vault.url}/ui/console.js`))).toBe(true);
  }, 60_000);
});
