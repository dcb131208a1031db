import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium: playwright-core drives it; no browser build is downloaded. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * Installs Debian's `chromium` package when it is missing, so that the browser
 * tests pass on a fresh CI machine. Needs root (CI runs as root); anyone else
 * gets a message saying what to install.
 */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install chromium) to run the browser tests`);
  }
  process.stderr.write(`${CHROMIUM_PATH} is missing: installing Debian's chromium package (once)\n`);
  // apt's own output is dropped; its error output goes into the exception if it fails.
  const options = { stdio: ["ignore", "ignore", "pipe"] as ("ignore" | "pipe")[], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
  execFileSync("apt-get", ["update"], options);
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], options);
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing`);
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

if (process.argv[1] === import.meta.filename) ensureChromium();
