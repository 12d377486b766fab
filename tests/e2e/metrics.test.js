// End-to-end: /metrics counts what was served, passes promtool, and a real
// Prometheus server scrapes it.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { grpc, startServer, clients, unary, generate, httpGet, metricSample: sample, freePort } = require('./tandem_client');

let server;
let generation;

before(async () => {
  server = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=4']);
  assert.ok(server.metricsAddress, 'the server logs its metrics address');
  ({ generation } = clients(server.address));
});

after(async () => {
  server.kill('SIGTERM');
  await server.exited;
});


test('health endpoints', async () => {
  assert.equal((await httpGet(`http://${server.metricsAddress}/healthz`)).status, 200);
  assert.equal((await httpGet(`http://${server.metricsAddress}/readyz`)).status, 200);
  assert.equal((await httpGet(`http://${server.metricsAddress}/nope`)).status, 404);
  const post = await new Promise((resolve, reject) => {
    const req = require('node:http').request(`http://${server.metricsAddress}/metrics`, { method: 'POST' },
      (res) => { res.resume(); res.on('end', () => resolve(res)); });
    req.on('error', reject);
    req.end();
  });
  assert.equal(post.statusCode, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
});

test('/metrics counts exactly what was served', async () => {
  const prompts = ['Metrics one', 'Metrics number two', 'And the third prompt here'];
  let promptTokens = 0;
  for (const p of prompts) promptTokens += (await unary(generation, 'Tokenize', { text: p })).token_ids.length;
  const done = await Promise.all(prompts.map((prompt) =>
    generate(generation, { prompt, stopping: { max_tokens: 5, ignore_eos: true } })));
  for (const r of done) assert.equal(r.error, null);
  const cancelled = await generate(generation, { prompt: 'Cancel me', stopping: { max_tokens: 500, ignore_eos: true } },
    { onData: (r, call) => call.cancel() });
  assert.equal(cancelled.error.code, grpc.status.CANCELLED);
  const invalid = await generate(generation, { prompt: '' });
  assert.equal(invalid.error.code, grpc.status.INVALID_ARGUMENT);
  // Cancellation is applied at the engine's next step: give it a moment.
  let text = '';
  for (let i = 0; i < 50; i++) {
    text = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
    if (sample(text, 'tandem_requests_total{finish_reason="cancelled"}') === 1) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(sample(text, 'tandem_requests_total{finish_reason="length"}'), 3);
  assert.equal(sample(text, 'tandem_requests_total{finish_reason="cancelled"}'), 1);
  assert.equal(sample(text, 'tandem_requests_total{finish_reason="rejected"}'), 1);
  assert.equal(sample(text, 'tandem_requests_total{finish_reason="stop"}'), 0);
  assert.equal(sample(text, 'tandem_request_duration_seconds_count'), 4);
  assert.equal(sample(text, 'tandem_time_to_first_token_seconds_count'), 4);
  // 3 x 5 tokens, plus however many the cancelled stream got.
  const generated = sample(text, 'tandem_generation_tokens_total');
  assert.ok(generated >= 15 + cancelled.ids.length && generated < 15 + 500, `generated ${generated}`);
  const itl = sample(text, 'tandem_inter_token_latency_seconds_count');
  assert.ok(itl >= 3 * 4, `inter-token samples: ${itl}`);
  assert.equal(sample(text, 'tandem_prompt_tokens_total'),
    promptTokens + (await unary(generation, 'Tokenize', { text: 'Cancel me' })).token_ids.length);
  assert.equal(sample(text, 'tandem_requests_running'), 0);
  assert.equal(sample(text, 'tandem_kv_slots_used'), 0);
  assert.equal(sample(text, 'tandem_kv_slots_capacity'), 4);
  assert.equal(sample(text, 'tandem_kv_cache_usage_ratio'), 0);
  assert.equal(sample(text, 'tandem_gpu_idle_seconds_total'), 0, 'no GPU idle on the CPU');
  assert.ok(sample(text, 'tandem_gpu_busy_seconds_total') > 0);
  assert.ok(sample(text, 'tandem_step_duration_seconds_count{phase="decode"}') > 0);
  assert.ok(text.includes('tandem_build_info{'));
  assert.equal(sample(text, 'tandem_step_gpu_idle_seconds_bucket{le="+Inf"}'),
    sample(text, 'tandem_step_gpu_idle_seconds_count'));
  // Prompt tokens per prefilling step add up to the prompt tokens prefilled.
  assert.equal(sample(text, 'tandem_step_prefill_tokens_sum'), sample(text, 'tandem_prompt_tokens_total'));
  assert.equal(sample(text, 'tandem_step_prefill_tokens_count'),
    sample(text, 'tandem_step_duration_seconds_count{phase="prefill"}'));
  // Every step's busy time, once per step: as many as the idle samples, and
  // adding up to the busy counter.
  assert.equal(sample(text, 'tandem_step_busy_seconds_count'),
    sample(text, 'tandem_step_gpu_idle_seconds_count'));
  const busy = sample(text, 'tandem_gpu_busy_seconds_total');
  assert.ok(Math.abs(sample(text, 'tandem_step_busy_seconds_sum') - busy) <= 1e-9 * busy,
    'step busy seconds add up to tandem_gpu_busy_seconds_total');
  assert.equal(sample(text, 'tandem_step_busy_seconds_bucket{le="+Inf"}'),
    sample(text, 'tandem_step_busy_seconds_count'));
  // A long prefill step (seconds on a CPU) still lands in a finite bucket.
  const bounds = [...text.matchAll(/^tandem_step_busy_seconds_bucket\{le="([^"+]+)"\}/gm)].map((m) => Number(m[1]));
  assert.ok(Math.max(...bounds) >= 10, `the largest bucket is ${Math.max(...bounds)} s`);
});

// A long prompt arriving while a stream decodes is split into chunks that
// share steps with the decode rows; /metrics shows it.
test('a long prompt during decoding is chunked into mixed steps', async () => {
  const before = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
  let release;
  const decoding = new Promise((resolve) => { release = resolve; });
  const background = generate(generation, { prompt: 'Keep decoding', stopping: { max_tokens: 300, ignore_eos: true } },
    { onData: () => release() });
  await decoding;
  // While it decodes: the KV-usage gauge an endpoint picker reads is the
  // fraction of slots in use.
  const during = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
  assert.ok(sample(during, 'tandem_kv_slots_used') >= 1);
  assert.equal(sample(during, 'tandem_kv_cache_usage_ratio'),
    sample(during, 'tandem_kv_slots_used') / sample(during, 'tandem_kv_slots_capacity'));
  const long = await generate(generation, {
    prompt: Array.from({ length: 300 }, (_, i) => `word${i % 97}`).join(' '),
    stopping: { max_tokens: 2, ignore_eos: true },
  });
  assert.equal(long.error, null);
  assert.equal((await background).error, null);
  const text = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
  const delta = (series) => sample(text, series) - sample(before, series);
  assert.ok(delta('tandem_prefill_partial_chunks_total') >= 2, 'the long prompt took several chunks');
  assert.ok(delta('tandem_mixed_steps_total') >= 2, 'its chunks shared steps with the decode rows');
  const budget = sample(text, 'tandem_prefill_budget_tokens');
  assert.ok(budget >= 32 && budget <= 2048, `budget ${budget}`);
});

// Every series the hand-written Prometheus client exported before
// prometheus-cpp replaced it (tests/e2e/data/metric_series.txt, taken from
// that build's /metrics) is still exported, so the dashboard and the rules
// keep working; new series come only from families added since (ADDED).
// Bucket bounds are compared as numbers (each client prints floats its way).
const ADDED = ['tandem_step_prefill_tokens', 'tandem_prefill_partial_chunks', 'tandem_mixed_steps',
  'tandem_prefill_budget_tokens', 'tandem_kv_cache_usage_ratio', 'tandem_step_busy_seconds'];
test('the same series as the earlier metrics client', async () => {
  const normalize = (series) => series.replace(/le="([^"]+)"/, (m, le) => `le="${Number(le)}"`);
  const expected = fs.readFileSync(path.join(__dirname, 'data/metric_series.txt'), 'utf8')
    .split('\n').filter((l) => l && !l.startsWith('#')).map(normalize).sort();
  const { body } = await httpGet(`http://${server.metricsAddress}/metrics`);
  const got = body.split('\n').filter((l) => l && !l.startsWith('#'))
    .map((l) => normalize(l.slice(0, l.lastIndexOf(' '))))
    .filter((s) => !s.startsWith('tandem_build_info')).sort();
  assert.deepEqual(got.filter((s) => !ADDED.some((f) => s === f || s.startsWith(`${f}_`))), expected);
  assert.ok(got.some((s) => s.startsWith('tandem_step_prefill_tokens_bucket')));
  for (const name of ['tandem_prefill_partial_chunks_total', 'tandem_mixed_steps_total',
    'tandem_prefill_budget_tokens']) assert.ok(got.includes(name), name);
  for (const line of ['# TYPE tandem_requests_total counter', '# TYPE tandem_step_duration_seconds histogram',
    '# TYPE tandem_kv_slots_capacity gauge']) {
    assert.ok(body.includes(line), line);
  }
});

// 50 connections that send nothing or trickle a request must not stop a
// scrape, and their descriptors must be released once they close.
test('idle and slow HTTP connections do not block /metrics and are released', async () => {
  const net = require('node:net');
  const fds = () => fs.readdirSync(`/proc/${server.pid}/fd`).length;
  const baseline = fds();
  const [host, port] = server.metricsAddress.split(':');
  const sockets = [];
  for (let i = 0; i < 50; i++) {
    const socket = net.connect(Number(port), host);
    socket.on('error', () => {});
    sockets.push(socket);
  }
  await Promise.all(sockets.map((s) => new Promise((r) => s.on('connect', r))));
  const trickle = setInterval(() => sockets.slice(25).forEach((s) => s.write('G')), 200);
  try {
    // The server accepts them (its listen backlog is small, so some connect
    // on a SYN retry); idle ones it closes after 2 s, trickling ones stay.
    for (let i = 0; i < 50 && fds() < baseline + 25; i++) await new Promise((r) => setTimeout(r, 100));
    const start = Date.now();
    const { status, body } = await httpGet(`http://${server.metricsAddress}/metrics`);
    const elapsed = Date.now() - start;
    assert.equal(status, 200);
    assert.ok(body.includes('tandem_requests_total'), 'a full exposition');
    assert.ok(elapsed < 1000, `/metrics answered in ${elapsed} ms with 50 idle or slow connections`);
    assert.ok(fds() >= baseline + 25, 'the trickling connections are open on the server');
  } finally {
    clearInterval(trickle);
    sockets.forEach((s) => s.destroy());
  }
  let now = fds();
  for (let i = 0; i < 100 && now > baseline; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = fds();
  }
  assert.ok(now <= baseline, `descriptors back to ${baseline} (now ${now})`);
});

test('promtool accepts the exposition, the rules and the scrape config', async () => {
  const { body } = await httpGet(`http://${server.metricsAddress}/metrics`);
  const metrics = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
  assert.equal(metrics.status, 0, metrics.stdout + metrics.stderr);
  assert.equal((metrics.stdout + metrics.stderr).trim(), '', 'no lint findings');
  const deploy = path.join(__dirname, '../../deploy/prometheus');
  const config = spawnSync('promtool', ['check', 'config', path.join(deploy, 'prometheus.yml')], { encoding: 'utf8' });
  assert.equal(config.status, 0, config.stdout + config.stderr);
  const rules = spawnSync('promtool', ['check', 'rules', path.join(deploy, 'tandem-rules.yml')], { encoding: 'utf8' });
  assert.equal(rules.status, 0, rules.stdout + rules.stderr);
  const dashboard = JSON.parse(fs.readFileSync(path.join(__dirname, '../../deploy/grafana/tandem-dashboard.json')));
  const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
  for (const family of ['tandem_time_to_first_token_seconds', 'tandem_inter_token_latency_seconds',
    'tandem_gpu_idle_seconds_total', 'tandem_requests_waiting', 'tandem_kv_slots_used',
    'tandem_prefill_budget_tokens', 'tandem_mixed_steps_total', 'tandem_prefill_partial_chunks_total']) {
    assert.ok(exprs.includes(family), `dashboard plots ${family}`);
  }
  // Every panel's PromQL parses: promtool checks them as recording rules.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-dash-'));
  const rulesFile = path.join(dir, 'dashboard-rules.yml');
  const exprList = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr.replace(/\$__rate_interval/g, '1m')));
  fs.writeFileSync(rulesFile, `groups:\n  - name: dashboard\n    rules:\n${exprList.map((e, i) =>
    `      - record: dashboard:expr${i}\n        expr: ${JSON.stringify(e)}\n`).join('')}`);
  const panels = spawnSync('promtool', ['check', 'rules', rulesFile], { encoding: 'utf8' });
  assert.equal(panels.status, 0, panels.stdout + panels.stderr);
  assert.match(panels.stdout, new RegExp(`${exprList.length} rules found`));
});

test('a real Prometheus scrapes Tandem and answers queries on its series', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-prom-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'prometheus.yml'),
    `global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: tandem\n    static_configs: [{targets: ["${server.metricsAddress}"]}]\n`);
  const prom = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
  { stdio: 'ignore' });
  try {
    const query = async (q) => {
      const { body } = await httpGet(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
      return JSON.parse(body).data.result;
    };
    let idle = [];
    let ttft = [];
    for (let i = 0; i < 120 && (idle.length === 0 || ttft.length === 0); i++) {
      await new Promise((r) => setTimeout(r, 500));
      try {
        idle = await query('tandem_gpu_idle_seconds_total');
        ttft = await query('tandem_time_to_first_token_seconds_count');
      } catch (e) { /* not up yet */ }
    }
    assert.equal(idle.length, 1, 'Prometheus has the idle series');
    assert.equal(ttft.length, 1, 'Prometheus has the latency series');
    assert.ok(Number(ttft[0].value[1]) >= 4);
    const up = await query('up{job="tandem"}');
    assert.equal(up[0].value[1], '1');
  } finally {
    prom.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
