// End-to-end: the built-in chat page at "/" in a real browser (Debian's
// chromium, driven by puppeteer-core): a message streams its answer in
// several DOM updates with TTFT and tokens/s shown, and the stop button
// aborts the request, which the server counts as a cancellation. Saves a
// screenshot (TANDEM_ARTIFACT_DIR, or the temporary directory).
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const puppeteer = require('puppeteer-core');
const { startServer, httpGet, metricSample: sample } = require('./tandem_client');

const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => fs.existsSync(p));

let server;
let browser;
let page;

before(async () => {
  assert.ok(CHROMIUM, 'Debian\'s chromium is installed (scripts/install-deps.sh)');
  server = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=2']);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 700 });
});

after(async () => {
  if (browser) await browser.close();
  server.kill('SIGTERM');
  await server.exited;
});


async function setField(id, value) {
  await page.$eval(`#${id}`, (el, v) => { el.value = v; }, String(value));
}

test('the page loads offline from the server and names the model', async () => {
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const loaded = await page.goto(`http://${server.metricsAddress}/`, { waitUntil: 'networkidle0' });
  // Scripts from the server only, no framing: the page works under this
  // policy (every test below runs it), so its script is not inline.
  const policy = loaded.headers()['content-security-policy'];
  assert.match(policy, /script-src 'self'(;|$)/);
  assert.match(policy, /frame-ancestors 'none'/);
  assert.equal(loaded.headers()['x-content-type-options'], 'nosniff');
  await page.waitForFunction(() => document.getElementById('model').textContent.length > 0);
  for (const url of requests) assert.ok(url.startsWith(`http://${server.metricsAddress}/`), `only the server: ${url}`);
});

test('a message streams in incrementally with TTFT and tokens/s', async () => {
  await setField('temperature', 0);
  await setField('max_tokens', 24);
  await page.evaluate(() => {
    window.updates = 0;
    new MutationObserver(() => {
      const answers = document.querySelectorAll('.assistant .text');
      if (answers.length && answers[answers.length - 1].textContent) window.updates++;
    }).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
  });
  await page.type('#prompt', 'Tell me about the sea.');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const stats = document.querySelectorAll('.assistant .stats');
    return stats.length === 1 && /tokens\/s$/.test(stats[0].textContent);
  }, { timeout: 60000 });
  const updates = await page.evaluate(() => window.updates);
  assert.ok(updates >= 3, `the answer grew in ${updates} DOM updates`);
  const stats = await page.$eval('.assistant .stats', (el) => el.textContent);
  assert.match(stats, /^TTFT \d+ ms · 24 tokens · [\d.]+ tokens\/s$/);
  const dir = process.env.TANDEM_ARTIFACT_DIR || os.tmpdir();
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'chat-page.png');
  await page.screenshot({ path: file });
  assert.deepEqual([...fs.readFileSync(file).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
});

test('stop aborts the answer and the server counts a cancellation', async () => {
  const cancelled = async () =>
    sample((await httpGet(`http://${server.metricsAddress}/metrics`)).body,
      'tandem_requests_total{finish_reason="cancelled"}');
  const before = await cancelled();
  await setField('max_tokens', 600);
  await page.type('#prompt', 'Now a very long story, please.');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const answers = document.querySelectorAll('.assistant .text');
    return answers.length === 2 && answers[1].textContent.length > 10;
  }, { timeout: 60000 });
  await page.click('#stop');
  await page.waitForFunction(() => /\(stopped\)$/.test(document.querySelectorAll('.assistant .stats')[1].textContent));
  let now = before;
  for (let i = 0; i < 50 && now === before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = await cancelled();
  }
  assert.equal(now, before + 1);
  assert.equal(await page.$eval('#send', (el) => el.disabled), false, 'ready for the next message');
});

test('a failed exchange is shown and left out of the conversation the next message sends', async () => {
  const sent = [];
  const onRequest = (r) => {
    if (r.url().endsWith('/v1/chat/completions') && r.method() === 'POST') sent.push(JSON.parse(r.postData()));
  };
  page.on('request', onRequest);
  try {
    await setField('max_tokens', 5000);  // more than the context holds: a 400
    await page.type('#prompt', 'This one fails.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.assistant .error').length === 1, { timeout: 60000 });
    assert.match(await page.$eval('.assistant .error', (el) => el.textContent), /^Error: HTTP 400: max_tokens = 5000/);
    await page.waitForFunction(() => !document.getElementById('send').disabled);
    await setField('max_tokens', 8);
    await page.type('#prompt', 'And this one works.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /tokens\/s$/.test([...document.querySelectorAll('.assistant .stats')].pop().textContent),
      { timeout: 60000 });
    assert.equal(sent.length, 2);
    const messages = sent[1].messages.map((m) => `${m.role}: ${m.content.slice(0, 20)}`);
    assert.ok(!messages.some((m) => m.includes('This one fails')), messages.join(' | '));
    assert.equal(sent[1].messages.filter((m) => m.role === 'user').length, 3, messages.join(' | '));
    assert.equal(sent[1].messages.at(-1).content, 'And this one works.');
    assert.ok(sent[1].messages.every((m) => m.content.length > 0), 'no empty turns');
  } finally {
    page.off('request', onRequest);
  }
});
