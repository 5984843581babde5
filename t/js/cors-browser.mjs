// Pages of other origins calling the API from Chromium (t/api/conventions.t):
//
//   node t/js/cors-browser.mjs API_BASE AGENT_KEY ALLOWED_PORT OTHER_PORT
//
// Serves one empty page on each of two origins (http://localhost:ALLOWED_PORT,
// which the test configuration lists with AgentShopCORSAllowOrigin, and
// http://127.0.0.1:OTHER_PORT, which it does not), and from each page calls
// the API with fetch(): a public search (any origin may read it, with its
// ETag), the agent's mandate (its key in Authorization: a preflight), and a
// quote (POST with JSON and an Idempotency-Key). Prints one JSON object: per
// origin and call, {ok, status, etag, error}. Exit 2 when the browser could
// not run; the test judges the rest.
import http from 'node:http';
import { launchChromium } from './chromium.mjs';

const [api, key, allowedPort, otherPort] = process.argv.slice(2);
if (!api || !key || !allowedPort || !otherPort) {
  console.error('usage: cors-browser.mjs API_BASE AGENT_KEY ALLOWED_PORT OTHER_PORT');
  process.exit(2);
}

function serve(port, host) {
  const s = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another origin</title><p>an agent page</p>');
  });
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(Number(port), host, () => resolve(s));
  });
}

// Runs in the page: each call's outcome as the page can see it.
async function calls({ api, key }) {
  async function one(url, init) {
    try {
      const r = await fetch(url, init);
      await r.text();
      return { ok: true, status: r.status, etag: r.headers.get('ETag') };
    } catch (e) {
      return { ok: false, error: String(e) };
    }
  }
  const auth = { Authorization: `Bearer ${key}`, 'Service-Agent': 'cors-page/1.0' };
  return {
    search: await one(`${api}/search?q=hand+soap&limit=2`),
    mandate: await one(`${api}/mandates/current`, { headers: auth }),
    quote: await one(`${api}/quotes`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': `cors-${Date.now()}` },
      body: JSON.stringify({ sku: 'NO-SUCH-SKU', quantity: 1 }),
    }),
  };
}

let browser;
const servers = [];
try {
  servers.push(await serve(allowedPort, 'localhost'), await serve(otherPort, '127.0.0.1'));
  browser = await launchChromium();
  const out = {};
  for (const [name, origin] of [
    ['allowed', `http://localhost:${allowedPort}`],
    ['other', `http://127.0.0.1:${otherPort}`],
  ]) {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    out[name] = await page.evaluate(calls, { api, key });
    await page.close();
  }
  console.log(JSON.stringify(out));
} catch (e) {
  console.error(String(e && e.stack ? e.stack : e));
  process.exitCode = 2;
} finally {
  if (browser) await browser.close();
  for (const s of servers) s.close();
}
