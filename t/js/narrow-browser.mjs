// People's pages on a phone: headless Chromium (Debian's /usr/bin/chromium)
// driven by playwright-core, with a 375 px wide viewport. Run by
// t/api/narrow.t:
//
//   node t/js/narrow-browser.mjs PAGES_JSON ARTIFACTS_DIR
//
// PAGES_JSON is a list of {name, url, shot}: each page is opened as a person
// would open a link (Chromium's own Accept header), and measured. The script
// prints one JSON object on stdout, {pages: [...]}, each with the HTTP status
// and content type, the document's scrollWidth and clientWidth, every button
// and link with its height, the headings, and the text of the elements the
// confirmation page marks (#expires, #delivery, #decided and their lines); a
// full-page screenshot ARTIFACTS_DIR/narrow-NAME.png when shot is set. The
// checks are the .t file's; exit 2 when the browser could not run.
import { onPage } from './chromium.mjs';

const [pagesJson, artifacts] = process.argv.slice(2);
if (!pagesJson || !artifacts) {
  console.error('usage: narrow-browser.mjs PAGES_JSON ARTIFACTS_DIR');
  process.exit(2);
}
const pages = JSON.parse(pagesJson);
const out = { pages: [], console: [] };
await onPage({ viewport: { width: 375, height: 740 }, deviceScaleFactor: 1, isMobile: true,
              hasTouch: true, locale: 'en-GB' }, out, async (page) => {
  for (const p of pages) {
    const res = await page.goto(p.url, { waitUntil: 'load' });
    const seen = await page.evaluate(() => {
      const line = (id) => {
        const el = document.getElementById(id);
        if (!el) return null;
        const dd = el.closest('dd') || el.parentElement;
        return { text: el.innerText.trim(), line: dd ? dd.innerText.trim() : null,
                 datetime: el.getAttribute('datetime') };
      };
      return {
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        bodyScrollWidth: document.body ? document.body.scrollWidth : null,
        targets: [...document.querySelectorAll('a[href], button, input[type=submit]')].map((e) => {
          const r = e.getBoundingClientRect();
          return { tag: e.tagName.toLowerCase(), text: e.innerText.trim().slice(0, 60),
                   height: Math.round(r.height * 10) / 10, width: Math.round(r.width * 10) / 10,
                   visible: r.width > 0 && r.height > 0 };
        }),
        h1: [...document.querySelectorAll('h1')].map((e) => e.innerText.trim()),
        expires: line('expires'),
        delivery: line('delivery'),
        decided: line('decided'),
        text: document.body ? document.body.innerText : '',
      };
    });
    const rec = { name: p.name, url: p.url, status: res ? res.status() : null,
                  content_type: res ? res.headers()['content-type'] || null : null,
                  csp: res ? res.headers()['content-security-policy'] || null : null, ...seen };
    if (p.shot) {
      rec.screenshot = `${artifacts}/narrow-${p.name}.png`;
      await page.screenshot({ path: rec.screenshot, fullPage: true });
    }
    out.pages.push(rec);
  }
});
console.log(JSON.stringify(out));
