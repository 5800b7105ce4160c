import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";

/**
 * The console test files' browser: Debian's real Chromium (never a
 * downloaded one), one per file, with every request recorded (to prove a
 * token reaches the server only inside the API calls), every script error,
 * and every blocked policy directive. Screenshots go to tmp/console-e2e/.
 */
const CHROMIUM = "/usr/bin/chromium";
export const SHOTS = path.join(PROJECT_ROOT, "tmp/console-e2e");

export interface ConsoleBrowser {
  context: BrowserContext;
  requests: { url: string; referer: string | undefined }[];
  pageErrors: string[];
  close(): Promise<void>;
}

/** Debian's Chromium, headless, in a fresh profile folder (the caller removes `profile` after closing). */
export async function launchChromium(viewport: { width: number; height: number }) {
  const profile = await mkdtemp(path.join(os.tmpdir(), "capvault-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
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
    viewport,
  });
  context.setDefaultTimeout(20_000);
  return { context, profile };
}

export async function openConsoleBrowser(): Promise<ConsoleBrowser> {
  await mkdir(SHOTS, { recursive: true });
  const { context, profile } = await launchChromium({ width: 1100, height: 760 });
  const requests: ConsoleBrowser["requests"] = [];
  const pageErrors: string[] = [];
  context.on("request", (r) => requests.push({ url: r.url(), referer: r.headers().referer }));
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  // Anything the console's own policy blocks is a bug in the console (the init script itself is exempt).
  await context.addInitScript(
    "addEventListener('securitypolicyviolation', (e) => (window.cspViolations ??= []).push(e.violatedDirective))",
  );
  return {
    context,
    requests,
    pageErrors,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export const tokenOf = (capUrl: string) => capUrl.slice(capUrl.lastIndexOf("/") + 1);

export const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

/** The file list holds one whole answer: no listing (a reload after a change) is still in flight. */
/**
 * Waits until what the page shows satisfies the assertion. `expect.poll`'s
 * default gives up after one wall-clock second, which a loaded CI machine
 * passes while the page is still working; this waits for the page as
 * Playwright's `waitFor` does, bounded by the test's own timeout.
 */
export const painted = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 50 });

export const listSettled = (page: Page) => page.locator("table.entries[aria-busy=false]").waitFor();

/** Records every dialog's message and accepts it, answering a prompt with `answer.next`. */
export function acceptDialogs(page: Page): { dialogs: string[]; answer: { next: string } } {
  const dialogs: string[] = [];
  const answer = { next: "" };
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.accept(d.type() === "prompt" ? answer.next : undefined);
  });
  return { dialogs, answer };
}

/**
 * The token is neither in the address bar nor in any entry of the tab's
 * session history (what Back, Forward and a restored tab would show).
 */
export async function expectNoTokenInHistory(page: Page, token: string): Promise<void> {
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
