// The person's browser with a passkey: headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core, with a virtual authenticator
// (Chrome DevTools Protocol, WebAuthn domain) that verifies the user. Run by
// t/api/passkey.t:
//
//   node t/js/passkey-browser.mjs PLAN_JSON
//
// PLAN_JSON: {"enrol_a": URL, "enrol_b": URL, "approve": URL, "looks": N, "foreign": URL,
// "replay_from": URL, "replay_to": URL, "decline": URL, "shots": DIR}. The script
//  1. registers a passkey for user A on enrol_a, and one for user B on enrol_b
//     (the same authenticator: a person's phone may hold several);
//  2. opens `approve` (A's pending confirmation) `looks` times, and fetches
//     its JSON as often, noting the challenge each offers, then clicks
//     Approve with the passkey, as a person would;
//     then declines `decline` (A's) on its page, with no passkey;
//  3. on `foreign` (A's), asks the authenticator for an assertion by B's
//     passkey over the page's challenge and posts it: the server must refuse;
//  4. on `replay_from` (A's), makes an assertion by A's passkey and posts it
//     (accepted), then posts the very same assertion to `replay_to` (A's):
//     the server must refuse it.
// It prints one JSON object with what each step saw; exit 2 when the browser
// could not run.
import { onPage } from './chromium.mjs';

const plan = JSON.parse(process.argv[2] || '{}');
const out = { console: [], steps: {} };

// In the page: an assertion over the page's own challenge by credential `id`,
// posted as JSON with the link's token; returns {status, body, assertion}.
// `reuse`: post that assertion instead of making one.
const ASSERT_AND_POST = async ({ id, reuse, action, token }) => {
  const b64u = {
    enc: (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
      .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
    dec: (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') +
      '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0)),
  };
  let assertion = reuse;
  if (!assertion) {
    const opts = JSON.parse(document.getElementById('webauthn-options').textContent);
    const cred = await navigator.credentials.get({ publicKey: {
      challenge: b64u.dec(opts.challenge), rpId: opts.rp_id,
      allowCredentials: [{ type: 'public-key', id: b64u.dec(id) }],
      userVerification: 'required' } });
    assertion = {
      credential_id: b64u.enc(cred.rawId),
      client_data: b64u.enc(cred.response.clientDataJSON),
      authenticator_data: b64u.enc(cred.response.authenticatorData),
      signature: b64u.enc(cred.response.signature),
    };
  }
  const res = await fetch(action, { method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ decision: 'approve', token, ...assertion }) });
  return { status: res.status, body: await res.json(), assertion };
};

function token_of(url) {
  return new URL(url).searchParams.get('token');
}
function action_of(url) {
  const u = new URL(url);
  return u.origin + u.pathname;
}

await onPage({ viewport: { width: 800, height: 700 }, locale: 'en-GB' }, out, async (page) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true,
               hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  // 1. enrolment, A then B
  const enrol = async (url, name) => {
    const first = await page.goto(url, { waitUntil: 'load' });
    const step = { status: first.status(), csp: first.headers()['content-security-policy'] || null };
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/enrol/')),
      page.click('#enrol'),
    ]);
    step.post_status = resp.status();
    step.body = await resp.json();
    await page.waitForFunction(() => document.getElementById('status').textContent.length > 0);
    step.shown = (await page.locator('#status').innerText()).trim();
    if (plan.shots) await page.screenshot({ path: `${plan.shots}/passkey-enrol-${name}.png`, fullPage: true });
    // the same link a second time: used up
    const again = await page.goto(url, { waitUntil: 'load' });
    step.again_status = again.status();
    return step;
  };
  out.steps.enrol_a = await enrol(plan.enrol_a, 'a');
  out.steps.enrol_b = await enrol(plan.enrol_b, 'b');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  out.credentials = credentials.length;
  const idA = out.steps.enrol_a.body?.passkey?.id;
  const idB = out.steps.enrol_b.body?.passkey?.id;

  // 2. approving on the page, as a person, after `looks` loads of the page and
  // as many fetches of its JSON, each offered a challenge (in step.challenges)
  {
    const offered = () => JSON.parse(document.getElementById('webauthn-options').textContent).challenge;
    const challenges = [];
    for (let i = 0; i < (plan.looks || 0); i++) {
      await page.goto(plan.approve, { waitUntil: 'load' });
      challenges.push(await page.evaluate(offered));
      challenges.push(await page.evaluate(async (url) => {
        const res = await fetch(url, { headers: { Accept: 'application/json' } });
        return (await res.json()).approval?.passkey?.challenge ?? null;
      }, plan.approve));
    }
    const first = await page.goto(plan.approve, { waitUntil: 'load' });
    const step = { status: first.status(), csp: first.headers()['content-security-policy'] || null };
    step.buttons = await page.getByRole('button').allInnerTexts();
    step.challenges = challenges;
    step.challenge = await page.evaluate(offered);
    if (plan.shots) await page.screenshot({ path: `${plan.shots}/passkey-approve.png`, fullPage: true });
    const [nav] = await Promise.all([
      page.waitForNavigation({ waitUntil: 'load', timeout: 15000 }),
      page.click('#approve'),
    ]);
    step.status_after = nav ? nav.status() : null;
    step.notice = (await page.locator('[role=status]').first().innerText()).trim();
    step.heading = (await page.locator('h1').innerText()).trim();
    if (plan.shots) await page.screenshot({ path: `${plan.shots}/passkey-approve-after.png`, fullPage: true });
    out.steps.approve = step;
  }

  // 2b. declining on the page: a plain form, no passkey
  if (plan.decline) {
    await page.goto(plan.decline, { waitUntil: 'load' });
    const [nav] = await Promise.all([
      page.waitForNavigation({ waitUntil: 'load', timeout: 15000 }),
      page.getByRole('button', { name: 'Decline', exact: true }).click(),
    ]);
    out.steps.decline = { status_after: nav ? nav.status() : null,
      notice: (await page.locator('[role=status]').first().innerText()).trim() };
  }

  // 3. B's passkey on A's confirmation
  await page.goto(plan.foreign, { waitUntil: 'load' });
  out.steps.foreign = await page.evaluate(ASSERT_AND_POST,
    { id: idB, action: action_of(plan.foreign), token: token_of(plan.foreign) });

  // 4. a replayed assertion
  await page.goto(plan.replay_from, { waitUntil: 'load' });
  const first = await page.evaluate(ASSERT_AND_POST,
    { id: idA, action: action_of(plan.replay_from), token: token_of(plan.replay_from) });
  out.steps.replay_first = { status: first.status, body: first.body };
  await page.goto(plan.replay_to, { waitUntil: 'load' });
  const again = await page.evaluate(ASSERT_AND_POST,
    { reuse: first.assertion, action: action_of(plan.replay_to), token: token_of(plan.replay_to) });
  out.steps.replay_again = { status: again.status, body: again.body };
});
console.log(JSON.stringify(out));
