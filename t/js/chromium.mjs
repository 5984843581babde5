// The browser of the browser tests (t/js/confirm-browser.mjs,
// t/js/passkey-browser.mjs): Debian's headless Chromium, or
// AGENTSHOP_CHROMIUM, driven by playwright-core.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.AGENTSHOP_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // As nobody in a container there is no user namespace for the sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}
