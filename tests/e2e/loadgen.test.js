// End-to-end: tandem-loadgen against the real CPU server (a tiny model),
// at a fixed concurrency and at a Poisson rate; its counts checked against
// the server's own /metrics.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { startServer, httpGet, BIN_DIR } = require('./tandem_client');

const sample = (text, series) => Number((text.split('\n').find((l) => l.startsWith(`${series} `)) || ' NaN').split(' ')[1]);

test('tandem-loadgen reports every request and agrees with /metrics', { timeout: 300000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-loadgen-'));
  const made = spawnSync(path.join(BIN_DIR, 'tandem-cli'), ['make-model', `--out=${dir}`, '--size=tiny']);
  assert.equal(made.status, 0, String(made.stderr));
  const server = await startServer([`--model=${dir}`, '--max_slots=4', '--metrics_listen=127.0.0.1:0']);
  try {
    const run = (args) => new Promise((resolve) => {
      const out = path.join(dir, `run-${Date.now()}.jsonl`);
      const child = require('node:child_process').spawn(path.join(BIN_DIR, 'tandem-loadgen'),
        [`--server=${server.address}`, `--out=${out}`, '--warmup=2', '--seed=7', ...args]);
      let stdout = '';
      child.stdout.on('data', (c) => { stdout += c; });
      child.stderr.on('data', () => {});
      child.on('exit', (code) => resolve({ code, stdout, lines: fs.readFileSync(out, 'utf8').trim().split('\n').map(JSON.parse) }));
    });
    const before = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
    const fixed = await run(['--num_requests=20', '--concurrency=4', '--prompt_tokens=uniform:5:30',
      '--output_tokens=8', '--slo=ttft:60000,tpot:60000']);
    assert.equal(fixed.code, 0, fixed.stdout);
    assert.match(fixed.stdout, /requests 20 ok, 0 failed/);
    assert.match(fixed.stdout, /TTFT\s/);
    const requests = fixed.lines.filter((l) => !l.summary);
    const summary = fixed.lines.find((l) => l.summary);
    assert.equal(requests.length, 20);
    for (const r of requests) {
      assert.equal(r.ok, true);
      assert.equal(r.output_tokens, 8);
      assert.ok(r.prompt_tokens >= 5 && r.prompt_tokens <= 30);
      assert.ok(r.ttft_s > 0 && r.ttft_s <= r.e2e_s);
      assert.ok(Math.abs(r.tpot_s - (r.e2e_s - r.ttft_s) / 7) < 1e-9);
    }
    // At most --concurrency requests overlap, and that many do.
    const edges = requests.flatMap((r) => [[r.start_s, 1], [r.start_s + r.e2e_s, -1]])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let most = 0;
    for (const [, d] of edges) { open += d; most = Math.max(most, open); }
    assert.equal(most, 4);
    assert.equal(summary.completed, 20);
    assert.equal(summary.output_tokens, 160);
    assert.equal(summary.goodput_requests_per_s, summary.requests_per_s, 'a generous SLO: every request is good');
    assert.ok(summary.ttft.p50_ms <= summary.ttft.p99_ms);
    // The server saw the same (the 2 warm-up requests included).
    const after = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
    assert.equal(sample(after, 'tandem_generation_tokens_total') - sample(before, 'tandem_generation_tokens_total'), 160 + 2 * 8);
    assert.equal(sample(after, 'tandem_requests_total{finish_reason="length"}') -
      sample(before, 'tandem_requests_total{finish_reason="length"}'), 22);
    const prompts = requests.reduce((a, r) => a + r.prompt_tokens, 0);
    assert.ok(sample(after, 'tandem_prompt_tokens_total') - sample(before, 'tandem_prompt_tokens_total') >= prompts);
    // Poisson arrivals at 20 requests/s: the run takes about 1 s of arrivals.
    // Read through gRPC's callback API this time, with every token's time.
    const poisson = await run(['--num_requests=20', '--request_rate=20', '--prompt_tokens=10', '--output_tokens=4',
      '--grpc_reads=callback', '--token_times']);
    assert.equal(poisson.code, 0, poisson.stdout);
    const timed = poisson.lines.filter((l) => !l.summary);
    const starts = timed.map((l) => l.start_s);
    assert.ok(Math.max(...starts) > 0.2, `arrivals spread over time (${Math.max(...starts)} s)`);
    for (const r of timed) {
      assert.equal(r.ok, true);
      assert.equal(r.token_times_s.length, 4);
      assert.equal(r.ttft_s, r.token_times_s[0]);
      for (let i = 1; i < 4; ++i) assert.ok(r.token_times_s[i] >= r.token_times_s[i - 1]);
      assert.ok(r.token_times_s[3] <= r.e2e_s);
    }
    const bad = spawnSync(path.join(BIN_DIR, 'tandem-loadgen'), [`--server=${server.address}`, '--grpc_reads=sideways']);
    assert.equal(bad.status, 2);
    assert.match(String(bad.stderr), /--grpc_reads is callback or blocking/);
    // A run refused before it starts leaves --out as it was (the file was
    // emptied before the flags after it were checked).
    const earlier = path.join(dir, 'earlier-run.jsonl');
    fs.writeFileSync(earlier, '{"summary": true}\n');
    for (const flag of ['--api=sideways', '--grpc_reads=sideways', '--timeout=-1s']) {
      const refused = spawnSync(path.join(BIN_DIR, 'tandem-loadgen'),
        [`--server=${server.address}`, `--out=${earlier}`, flag], { encoding: 'utf8', timeout: 20000 });
      assert.equal(refused.status, 2, `${flag}: ${refused.stderr}`);
      assert.equal(fs.readFileSync(earlier, 'utf8'), '{"summary": true}\n', flag);
    }
    fs.writeFileSync(path.join(dir, 'empty-key'), ' \n');
    // Flags that cannot run are refused at once (--concurrency=0 waited
    // forever, a negative count aborted, an unwritable --out lost the run).
    for (const [flag, message] of [['--concurrency=0', /--concurrency must be at least 1/],
      ['--num_requests=-1', /--num_requests and --warmup must be 0 or more/],
      [`--out=${path.join(dir, 'missing', 'run.jsonl')}`, /--out: cannot write/],
      [`--api_key_file=${path.join(dir, 'config.json')}-missing`, /--api_key_file: /],
      [`--api_key_file=${path.join(dir, 'empty-key')}`, /--api_key_file: .* is empty/],
      [`--tls_ca=${path.join(dir, 'config.json')}`, /holds no PEM certificate/]]) {
      const refused = spawnSync(path.join(BIN_DIR, 'tandem-loadgen'), [`--server=${server.address}`, flag],
        { encoding: 'utf8', timeout: 20000 });
      assert.equal(refused.status, 2, `${flag}: ${refused.stderr}`);
      assert.match(refused.stderr, message);
    }
    // The OpenAI-compatible HTTP API, both endpoints, streamed.
    for (const api of ['completions', 'chat']) {
      const start = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
      const openai = await run([`--api=${api}`, `--http=${server.metricsAddress}`, '--num_requests=8',
        '--concurrency=4', '--prompt_tokens=12', '--output_tokens=6']);
      assert.equal(openai.code, 0, openai.stdout);
      assert.match(openai.stdout, /requests 8 ok, 0 failed/);
      const rows = openai.lines.filter((l) => !l.summary);
      for (const r of rows) {
        assert.equal(r.output_tokens, 6, api);
        assert.ok(r.prompt_tokens > 0 && r.ttft_s > 0 && r.ttft_s <= r.e2e_s, api);
      }
      const end = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
      assert.equal(sample(end, 'tandem_generation_tokens_total') - sample(start, 'tandem_generation_tokens_total'),
        (8 + 2) * 6, `${api}: the server generated what the load generator counted (warm-up included)`);
      if (api === 'completions') {
        assert.equal(sample(end, 'tandem_prompt_tokens_total') - sample(start, 'tandem_prompt_tokens_total'), (8 + 2) * 12);
      }
      // With --logprobs every token is an event of its own: six stamps, read
      // from the events' logprob entries (a failed read leaves none).
      const stamped = await run([`--api=${api}`, `--http=${server.metricsAddress}`, '--num_requests=4',
        '--concurrency=4', '--prompt_tokens=12', '--output_tokens=6', '--logprobs', '--token_times', '--warmup=0']);
      assert.equal(stamped.code, 0, stamped.stdout);
      for (const r of stamped.lines.filter((l) => !l.summary)) {
        assert.equal(r.token_times_s.length, 6, api);
        for (let i = 1; i < 6; ++i) assert.ok(r.token_times_s[i] >= r.token_times_s[i - 1], `${api}: ${r.token_times_s}`);
      }
    }
    // --timeout: requests still streaming past it fail, named, and the run exits 1.
    for (const [api, message] of [['grpc', /DEADLINE_EXCEEDED/], ['completions', /timed out after 5ms/]]) {
      const slow = spawnSync(path.join(BIN_DIR, 'tandem-loadgen'), [`--server=${server.address}`,
        `--api=${api}`, `--http=${server.metricsAddress}`, '--num_requests=2', '--concurrency=2', '--warmup=0',
        '--prompt_tokens=8', '--output_tokens=110', '--timeout=5ms', '--progress_seconds=0'],
      { encoding: 'utf8', timeout: 60000 });
      assert.equal(slow.status, 1, `${api}: ${slow.stdout} ${slow.stderr}`);
      assert.match(slow.stdout, /requests 0 ok, 2 failed/, api);
      assert.match(slow.stderr, message, api);
    }
    // Last, as it leaves requests on the server: a long run's memory stays
    // flat, its workers are reused. A thread per
    // request kept each finished thread's stack mapped until the run's end
    // (about two mappings per request).
    const samples = await new Promise((resolve) => {
      const child = require('node:child_process').spawn(path.join(BIN_DIR, 'tandem-loadgen'),
        [`--server=${server.address}`, '--num_requests=100000', '--concurrency=4', '--prompt_tokens=4',
          '--output_tokens=1', '--warmup=0', '--progress_seconds=1']);
      const seen = [];
      child.stderr.on('data', (chunk) => {
        for (const m of String(chunk).matchAll(/loadgen: (\d+)\/\d+ done/g)) {
          if (seen.length >= 4) break;
          const maps = fs.readFileSync(`/proc/${child.pid}/maps`, 'utf8').split('\n').length;
          seen.push({ done: Number(m[1]), maps });
          if (seen.length === 4) child.kill('SIGKILL');
        }
      });
      child.on('exit', () => resolve(seen));
    });
    assert.equal(samples.length, 4);
    const [, first, , last] = samples;
    assert.ok(last.done - first.done >= 20, `requests done between samples: ${last.done - first.done}`);
    assert.ok(last.maps - first.maps < 10,
      `mappings grew from ${first.maps} to ${last.maps} over ${last.done - first.done} requests`);
  } finally {
    server.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
