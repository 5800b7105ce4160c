import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  acceptDialogs,
  type ConsoleBrowser,
  listSettled,
  openConsoleBrowser,
  painted,
  SHOTS,
  tokenOf,
} from "./console-browser.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/**
 * The console's history and Undo in Debian's real Chromium: versions,
 * restore, redact, Undo after a delete, an upload and a move, sharing
 * defaults, a write-only drop box and the delegation tree's filter. The node
 * project's shared vault (a root of this file's own), one browser.
 */
let vault: SharedVault;
let browser: ConsoleBrowser;
let files: string;

beforeAll(async () => {
  vault = await sharedVault("console-history");
  files = await mkdtemp(path.join(os.tmpdir(), "capvault-console-history-"));
  browser = await openConsoleBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (files) await rm(files, { recursive: true, force: true });
});

describe("web console in Chromium: history and Undo", () => {
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
    const page = await browser.context.newPage();
    const { dialogs, answer } = acceptDialogs(page);
    await page.goto(`${vault.url}/ui#${tokenOf(root)}`);
    // The header tells how much the cap holds and against which quota.
    await painted(() => page.locator("#cap-header dd.usage").textContent()).toMatch(/ files? \(no quota\)$/);
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
    await painted(() => versions.count()).toBe(2);
    expect(await page.locator(".history .op").allTextContents()).toEqual(["modified", "created"]);
    expect(await versions.first().textContent()).toContain("this cap");
    await versions.last().locator("text=View").click();
    await page.locator(".version-view pre.text .line", { hasText: "v1" }).waitFor();
    await versions.last().locator("text=Restore").click();
    await painted(() => versions.count()).toBe(3);
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
    answer.next = "hist/b2.txt";
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
    const child = await browser.context.newPage();
    await child.goto(shared);
    await child.locator("button.file", { hasText: "a.txt" }).waitFor();
    await child.locator("table.entries tr", { hasText: "a.txt" }).locator("text=History").click();
    await painted(() => child.locator(".history tr[data-version]").count()).toBeGreaterThan(3);
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
    expect(browser.pageErrors).toEqual([]);
    expect(await page.evaluate("window.cspViolations ?? []")).toEqual([]);
    await page.close();
  }, 60_000);
  it("an upload while a listing reload is in flight still sees the file it replaces; a stale listing never paints", async () => {
    const root = vault.rootCapUrl;
    expect((await fetch(`${root}/file?path=race/r.txt`, { method: "PUT", body: "one\n" })).ok).toBe(true);
    const page = await browser.context.newPage();
    // Exact names: "other.txt" ends in "r.txt".
    const rowOf = (name: string) =>
      page.locator("table.entries tr", { has: page.locator("button.file", { hasText: new RegExp(`^${name}$`) }) });
    await page.goto(`${vault.url}/ui#${tokenOf(root)}`);
    await page.locator("button.dir", { hasText: "race/" }).click();
    await rowOf("r\\.txt").waitFor();
    await listSettled(page);
    // Every listing from here is answered by the vault at once but handed to the page only when released,
    // so the order of the answers is the test's, not the machine's.
    const held: { release: () => void; delivered: Promise<void> }[] = [];
    const listing = (url: URL) => url.pathname.endsWith("/list");
    await page.route(listing, async (route) => {
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const delivered = page
        .waitForEvent("requestfinished", { predicate: (r) => r === route.request(), timeout: 0 })
        .then(() => undefined);
      delivered.catch(() => {}); // awaited only for the answers released; the page's close ends the others
      // Counted as it arrives, before the vault is asked: the test waits for the listing, not for the vault's answer.
      held.push({ release, delivered });
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
    });
    const drop = (name: string, body: string) =>
      page.evaluate(`(() => {
        const files = new DataTransfer();
        files.items.add(new File([${JSON.stringify(body)}], ${JSON.stringify(name)}, { type: "text/plain" }));
        document.querySelector(".zone").dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true }));
      })()`);
    // A first upload's reload is in flight (its answer, without the next change, held) ...
    await drop("other.txt", "other\n");
    await page.locator("#status", { hasText: "Uploaded other.txt" }).waitFor();
    await painted(() => held.length).toBe(1);
    expect(await page.locator("table.entries").getAttribute("aria-busy")).toBe("true");
    // ... the rows shown meanwhile are the last whole answer, not an empty or half list ...
    await rowOf("r\\.txt").waitFor();
    // ... and an upload over r.txt then is still known as a replacement, with its Undo.
    await drop("r.txt", "replaced!\n");
    await page.locator("#status", { hasText: "Uploaded r.txt, replacing what was there." }).waitFor();
    await painted(() => held.length).toBe(2);
    // The newer listing answers first; the older one, answered later, must not paint over it.
    held[1]!.release();
    await rowOf("other\\.txt").waitFor();
    await painted(() => rowOf("r\\.txt").textContent()).toContain("10 B");
    held[0]!.release();
    await held[0]!.delivered;
    // A request of the page's own, made after the stale answer arrived, so the console has had it in hand.
    await page.evaluate("fetch('/ui/console.js').then((r) => r.text()).then(() => true)");
    await listSettled(page);
    expect(await rowOf("r\\.txt").textContent()).toContain("10 B");
    expect(await rowOf("other\\.txt").count()).toBe(1);
    expect(held.length).toBe(2);
    await page.unroute(listing);
    await page.locator("#status button.undo").click();
    await page.locator("#status", { hasText: "Undone" }).waitFor();
    expect(await (await fetch(`${root}/file?path=race/r.txt`)).text()).toBe("one\n");
    expect(browser.pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
