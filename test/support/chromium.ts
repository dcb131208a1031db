import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium: playwright-core drives it; no browser build is downloaded. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * Installs Debian's `chromium` package when it is missing (scripts/ensure-chromium.sh,
 * which `npm test` also runs first), so that the browser tests pass on a fresh CI
 * machine; anyone else gets a message saying what to install.
 */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const said = execFileSync("bash", [join(import.meta.dirname, "../../scripts/ensure-chromium.sh")], { encoding: "utf8" });
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: ${said.trim()}`);
}

export interface LaunchedChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile directory. The flags keep it from
 * reaching out (sync, component updates, QUIC probes), which a closed network
 * refuses slowly.
 */
export async function launchChromium(): Promise<LaunchedChromium> {
  ensureChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), "reachkit-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
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
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

