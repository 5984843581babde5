// A person's browser on a confirmation link: headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core. Run by t/api/browser.t:
//
//   node t/js/confirm-browser.mjs URL approve|decline SCREENSHOT.png EXPECT_JSON
//
// EXPECT_JSON holds the texts the page must show: {"item", "price", "agent",
// "reason"}. The script opens the signed link, checks each text is visible,
// saves a full-page screenshot, clicks the button, and prints one JSON object
// on stdout: what the page showed before and after the click. It exits 1 when
// a check fails (the JSON still says which), 2 when the browser could not run.
import { onPage } from './chromium.mjs';

const [url, decision, shot, expectJson] = process.argv.slice(2);
if (!url || !['approve', 'decline'].includes(decision) || !shot || !expectJson) {
  console.error('usage: confirm-browser.mjs URL approve|decline SCREENSHOT.png EXPECT_JSON');
  process.exit(2);
}
const expect = JSON.parse(expectJson);

// What a person sees: the visible text of the page and of each field.
async function read(page) {
  const field = async (id) => {
    const l = page.locator(`#${id}`);
    if ((await l.count()) !== 1) return { text: null, visible: false };
    return { text: (await l.innerText()).trim(), visible: await l.isVisible() };
  };
  return {
    url: page.url(),
    title: await page.title(),
    text: await page.locator('body').innerText(),
    item: await field('item'),
    price: await field('price'),
    agent: await field('agent'),
    reason: await field('reason'),
    status: await field('status'),
    notice: (await page.locator('[role=status]').count())
      ? (await page.locator('[role=status]').innerText()).trim()
      : null,
    buttons: await page.getByRole('button').allInnerTexts(),
  };
}

const out = { url, decision, screenshot: shot, checks: {}, console: [], refused: [] };
await onPage({ viewport: { width: 800, height: 600 }, locale: 'en-GB' }, out, async (page) => {
  // CSP violations (out.console) and failed requests show up here: the page must need neither.
  page.on('requestfailed', (r) => out.refused.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));

  const first = await page.goto(url, { waitUntil: 'load' });
  out.status_before = first.status();
  out.content_type = first.headers()['content-type'] || null;
  out.csp = first.headers()['content-security-policy'] || null;
  out.before = await read(page);
  for (const k of ['item', 'price', 'agent', 'reason']) {
    const f = out.before[k];
    out.checks[k] = Boolean(f.visible && f.text && f.text.includes(expect[k]) &&
                            out.before.text.includes(expect[k]));
  }
  await page.screenshot({ path: shot, fullPage: true });

  const label = decision === 'approve' ? 'Approve' : 'Decline';
  const button = page.getByRole('button', { name: label, exact: true });
  out.checks.button = (await button.count()) === 1 && (await button.isVisible());
  const [nav] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'load', timeout: 15000 }),
    button.click(),
  ]);
  out.status_after = nav ? nav.status() : null;
  out.after = await read(page);
  out.screenshot_after = shot.replace(/\.png$/, '-after.png');
  await page.screenshot({ path: out.screenshot_after, fullPage: true });
});
console.log(JSON.stringify(out));
process.exit(Object.values(out.checks).every(Boolean) ? 0 : 1);
