// The browser of the browser tests (t/js/confirm-browser.mjs,
// t/js/narrow-browser.mjs, t/js/passkey-browser.mjs, t/js/cors-browser.mjs):
// Debian's headless Chromium, or AGENTSHOP_CHROMIUM, driven by playwright-core.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.AGENTSHOP_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // As nobody in a container there is no user namespace for the sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

// Runs work(page) on one page (pageOptions: playwright's context options),
// the page's console messages collected in out.console, then closes the
// browser. When the browser cannot run or work throws, the report `out` is
// printed with out.error and the script exits 2: the .t file tells a browser
// that could not run from a check that failed.
export async function onPage(pageOptions, out, work) {
  let browser;
  try {
    browser = await launchChromium();
    const page = await browser.newPage(pageOptions);
    page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
    await work(page);
    await browser.close();
  } catch (e) {
    out.error = String(e && e.stack ? e.stack : e);
    if (browser) await browser.close().catch(() => {});
    console.log(JSON.stringify(out));
    process.exit(2);
  }
}
