/** Debian's Chromium driven by playwright-core, as the explorer's browser tests use it. */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium, type Browser as PlaywrightBrowser } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface Browser {
  /** A fresh, isolated context (its own storage and cache). */
  context(options: {
    viewport: { width: number; height: number };
    colorScheme?: "light" | "dark";
    storageState?: Awaited<ReturnType<BrowserContext["storageState"]>>;
  }): Promise<BrowserContext>;
  /** Closes every context made through this handle. */
  close(): Promise<void>;
}

// One Chromium per worker, shared by its browser test files (the suite runs them in one module graph
// per worker): launching it was a second or more of each file. Files stay apart by their contexts,
// each a fresh profile of its own; playwright ends the browser when the worker exits.
let launched: Promise<PlaywrightBrowser> | undefined;

async function chromiumOfWorker(): Promise<PlaywrightBrowser> {
  const running = await launched;
  if (running?.isConnected()) return running;
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  }
  launched = chromium.launch({
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
  // A failed launch is not kept: the next file tries again.
  launched.catch(() => {
    launched = undefined;
  });
  return launched;
}

/**
 * Headless Chromium for one test file: the worker's (launched on first use), whose contexts this
 * handle closes; fails with the install command when it is missing.
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromiumOfWorker();
  const contexts = new Set<BrowserContext>();
  return {
    async context(options) {
      const context = await browser.newContext({ colorScheme: "light", ...options });
      contexts.add(context);
      context.once("close", () => contexts.delete(context));
      return context;
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close()));
    },
  };
}
