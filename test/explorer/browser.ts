/** Debian's Chromium driven by playwright-core, as the explorer's browser tests use it. */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface Browser {
  /** A fresh, isolated context (its own storage and cache). */
  context(options: {
    viewport: { width: number; height: number };
    colorScheme?: "light" | "dark";
    storageState?: Awaited<ReturnType<BrowserContext["storageState"]>>;
  }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium (playwright gives each launch a fresh, temporary profile); fails with
 * the install command when it is missing.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context: (options) => browser.newContext({ colorScheme: "light", ...options }),
    close: () => browser.close(),
  };
}
