// End-to-end: what a hostile or careless client can do to the real server.
// Limits before work, unparsable requests, deadline accounting, admission,
// shutdown, TLS and API keys.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { grpc, startServer, clients, unary, generate, httpGet, BIN_DIR } = require('./tandem_client');

const long = (prompt, maxTokens) => ({ prompt, stopping: { max_tokens: maxTokens, ignore_eos: true } });
const rssBytes = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

// A Generate call whose request bytes are given raw (to send what the
// generated code would refuse to encode, e.g. invalid UTF-8).
function rawGenerate(address, bytes) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    const call = client.makeServerStreamRequest('/tandem.v1.Generation/Generate',
      (b) => b, (b) => b, bytes);
    call.on('data', () => {});
    call.on('error', (error) => { client.close(); resolve(error); });
    call.on('end', () => { client.close(); resolve(null); });
  });
}

// GenerateRequest { prompt (field 2) = bytes }.
const promptField = (bytes) => Buffer.concat([Buffer.from([0x12, bytes.length]), bytes]);

async function metricsText(server) {
  return (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
}
function sample(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

test('oversized and unparsable requests are refused before any work, with the limit named', async () => {
  const server = await startServer(['--metrics_listen=127.0.0.1:0']);
  const { generation } = clients(server.address);
  try {
    const info = await unary(generation, 'GetModelInfo', {});
    const huge = 'word '.repeat(800000);  // 4 MB: 800k tokens, far past the context
    const start = Date.now();
    const rss = rssBytes(server.pid);
    const results = await Promise.all(Array.from({ length: 8 }, () => generate(generation, long(huge.slice(0, 3900000), 4))));
    for (const r of results) {
      assert.equal(r.error.code, grpc.status.INVALID_ARGUMENT);
      assert.match(r.error.details, /prompt is 3900000 bytes; the limit is \d+ bytes/);
    }
    await assert.rejects(unary(generation, 'Tokenize', { text: huge.slice(0, 3900000) }),
      (e) => e.code === grpc.status.INVALID_ARGUMENT && /text is 3900000 bytes/.test(e.details));
    assert.ok(Date.now() - start < 5000, `refused in ${Date.now() - start} ms`);
    assert.ok(rssBytes(server.pid) - rss < 200e6, 'memory does not grow by the prompts\' tokens');
    // Over the gRPC receive limit: refused by gRPC itself.
    const tooBig = await generate(generation, long('x'.repeat(5 << 20), 4));
    assert.equal(tooBig.error.code, grpc.status.RESOURCE_EXHAUSTED);
    // A request id over 128 bytes, echoed nowhere.
    const id = await generate(generation, { ...long('Hi', 2), request_id: 'x'.repeat(1000) });
    assert.equal(id.error.code, grpc.status.INVALID_ARGUMENT);
    assert.match(id.error.details, /request_id is 1000 bytes; the limit is 128 bytes/);
    // Invalid UTF-8 in a string field: INVALID_ARGUMENT with a message, and
    // 50 of them write at most a few log lines.
    const before = server.log().split('\n').length;
    const errors = await Promise.all(Array.from({ length: 50 },
      () => rawGenerate(server.address, promptField(Buffer.from([0x48, 0xff, 0xfe, 0x69])))));
    for (const e of errors) {
      assert.equal(e.code, grpc.status.INVALID_ARGUMENT);
      assert.match(e.details, /not a valid tandem\.v1\.GenerateRequest.*invalid UTF-8/);
    }
    const logged = server.log().split('\n').length - before;
    assert.ok(logged <= 6, `${logged} log lines for 50 bad requests`);
    // The server carries on.
    const ok = await generate(generation, long('Still serving', 3));
    assert.equal(ok.error, null);
    assert.equal(info.context_length > 0, true);
    const text = await metricsText(server);
    assert.equal(sample(text, 'tandem_requests_total{finish_reason="rejected"}'), 8 + 1 + 50);
  } finally {
    server.kill('SIGTERM');
    await server.exited;
  }
});

test('every expired deadline is counted as a deadline, once', async () => {
  const server = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=2']);
  const { generation } = clients(server.address);
  const counted = async (reason) => sample(await metricsText(server), `tandem_requests_total{finish_reason="${reason}"}`);
  try {
    await unary(generation, 'GetModelInfo', {});  // the channel is up
    // 100 to 300 ms: expired in the queue or in a slot (a call of 1000
    // tokens takes far longer on the CPU): every one counted as a deadline.
    const calls = [];
    for (const ms of [100, 200, 300]) {
      for (let i = 0; i < 12; i++) calls.push(generate(generation, long(`Deadline ${ms} ${i}`, 1000), { deadlineMs: ms }));
    }
    const results = await Promise.all(calls);
    const seen = results.filter((r) => r.error && r.error.code === grpc.status.DEADLINE_EXCEEDED).length;
    assert.equal(seen, 36, 'no call of 1000 tokens finishes within 300 ms');
    for (let i = 0; i < 50 && (await counted('deadline')) < 36; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await counted('deadline'), 36);
    // 1 to 30 ms: some may expire before gRPC hands the request to Tandem
    // (grpc-js may not even send a 1 ms call); those cannot be counted. The
    // rest count as deadlines, and none as cancelled.
    const quick = await Promise.all(Array.from({ length: 48 },
      (_, i) => generate(generation, long(`Quick ${i}`, 1000), { deadlineMs: [1, 3, 10, 30][i % 4] })));
    assert.ok(quick.every((r) => r.error && r.error.code === grpc.status.DEADLINE_EXCEEDED));
    await new Promise((r) => setTimeout(r, 1000));
    const total = await counted('deadline');
    assert.ok(total >= 36 && total <= 84, `deadline count ${total}`);
    for (const reason of ['cancelled', 'rejected', 'length', 'stop', 'error', 'shutdown']) {
      assert.equal(await counted(reason), 0, reason);
    }
  } finally {
    server.kill('SIGTERM');
    await server.exited;
  }
});

test('a burst is admitted up to free slots plus the queue', async () => {
  const server = await startServer(['--max_slots=8', '--max_queue=32']);
  const { generation } = clients(server.address);
  try {
    let refused = 0;
    const calls = Array.from({ length: 200 }, (_, i) => generate(generation, long(`Burst ${i}`, 1000))
      .then((r) => { if (r.error && r.error.code === grpc.status.RESOURCE_EXHAUSTED) refused += 1; }));
    let last = -1;
    for (let i = 0; i < 100 && refused !== last; i++) {
      last = refused;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(refused, 160, 'exactly 200 - (8 slots + 32 queue places) refused');
    void calls;
  } finally {
    server.kill('SIGKILL');
    await server.exited;
  }
});

test('SIGTERM: queued requests get UNAVAILABLE at once, a second signal ends the rest', async () => {
  const server = await startServer(['--max_slots=1', '--max_queue=8', '--shutdown_grace=60s',
    '--metrics_listen=127.0.0.1:0']);
  const { generation } = clients(server.address);
  let started;
  const running = generate(generation, long('Running', 1000), {
    onData: () => { if (started) { started(); started = null; } },
  });
  await new Promise((r) => { started = r; });
  const queued = Array.from({ length: 4 }, (_, i) => generate(generation, long(`Queued ${i}`, 10)));
  await new Promise((r) => setTimeout(r, 300));
  const signalled = Date.now();
  server.kill('SIGTERM');
  for (const q of await Promise.all(queued)) {
    assert.equal(q.error.code, grpc.status.UNAVAILABLE, q.error.details);
    assert.match(q.error.details, /retry elsewhere/);
  }
  assert.ok(Date.now() - signalled < 3000, 'not started: refused at once');
  assert.equal((await httpGet(`http://${server.metricsAddress}/readyz`)).status, 503);
  await new Promise((r) => setTimeout(r, 500));
  server.kill('SIGTERM');  // the second signal
  const result = await running;
  assert.equal(result.error, null);
  assert.equal(result.last.finish_reason, 'FINISH_REASON_SHUTDOWN');
  assert.equal((await server.exited).code, 0);
  assert.ok(Date.now() - signalled < 10000, 'the second signal does not wait out the 60 s grace');
});

test('TLS and an API key: gRPC and HTTP', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
    '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
  assert.equal(made.status, 0, String(made.stderr));
  fs.writeFileSync(path.join(dir, 'api-key'), 'sesame-123\n');
  const server = await startServer([`--tls_cert=${cert}`, `--tls_key=${key}`, '--metrics_listen=127.0.0.1:0',
    `--api_key_file=${path.join(dir, 'api-key')}`]);
  try {
    const { proto } = require('./tandem_client');
    const tls = grpc.credentials.createSsl(fs.readFileSync(cert));
    const withKey = grpc.credentials.combineChannelCredentials(tls,
      grpc.credentials.createFromMetadataGenerator((_, cb) => {
        const md = new grpc.Metadata();
        md.set('authorization', 'Bearer sesame-123');
        cb(null, md);
      }));
    const keyed = new proto.tandem.v1.Generation(server.address, withKey);
    const ok = await generate(keyed, long('Over TLS', 3));
    assert.equal(ok.error, null);
    assert.equal(ok.ids.length, 3);
    const keyless = new proto.tandem.v1.Generation(server.address, tls);
    const denied = await generate(keyless, long('No key', 3));
    assert.equal(denied.error.code, grpc.status.UNAUTHENTICATED);
    await assert.rejects(unary(keyless, 'GetModelInfo', {}), (e) => e.code === grpc.status.UNAUTHENTICATED);
    const health = new proto.grpc.health.v1.Health(server.address, tls);
    assert.equal((await unary(health, 'Check', { service: '' })).status, 'SERVING', 'health stays open');
    const plain = new proto.tandem.v1.Generation(server.address, grpc.credentials.createInsecure());
    const refused = await generate(plain, long('Plaintext', 3), { deadlineMs: 3000 });
    assert.notEqual(refused.error, null, 'plaintext gets nothing');
    // tandem-cli speaks TLS and sends the key.
    const cli = (command, args = []) => spawnSync(path.join(BIN_DIR, 'tandem-cli'),
      [command, `--server=${server.address}`, `--tls_ca=${cert}`, '--timeout=10s', ...args], { encoding: 'utf8' });
    const info = cli('info', [`--api_key_file=${path.join(dir, 'api-key')}`]);
    assert.equal(info.status, 0, info.stderr);
    assert.match(info.stdout, /architecture: "gpt2"/);
    assert.notEqual(cli('info').status, 0, 'no key, no answer');
    // The container's HEALTHCHECK needs no key.
    const cliHealth = cli('health');
    assert.deepEqual([cliHealth.status, cliHealth.stdout], [0, 'SERVING\n'], cliHealth.stderr);
    // tandem-loadgen too, through gRPC and HTTPS; without the key every request fails.
    const loadgen = (args) => spawnSync(path.join(BIN_DIR, 'tandem-loadgen'),
      [`--server=${server.address}`, `--http=${server.metricsAddress}`, `--tls_ca=${cert}`, '--num_requests=3',
        '--concurrency=3', '--prompt_tokens=8', '--output_tokens=4', '--warmup=0', '--progress_seconds=0', ...args],
      { encoding: 'utf8', timeout: 120000 });
    for (const api of ['grpc', 'completions', 'chat']) {
      const run = loadgen([`--api=${api}`, `--api_key_file=${path.join(dir, 'api-key')}`]);
      assert.equal(run.status, 0, `${api}: ${run.stdout} ${run.stderr}`);
      assert.match(run.stdout, /requests 3 ok, 0 failed/, api);
      const keyless = loadgen([`--api=${api}`]);
      assert.notEqual(keyless.status, 0, `${api} without the key`);
      assert.match(keyless.stderr, api === 'grpc' ? /UNAUTHENTICATED/ : /HTTP 401/, `${api}: ${keyless.stderr}`);
    }
    // HTTPS: /metrics and the probes open by default, other paths need the key.
    const https = require('node:https');
    const get = (p, headers = {}) => new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: server.metricsAddress.split(':')[1], path: p, ca: fs.readFileSync(cert),
        servername: 'localhost', headers }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); })
        .on('error', reject);
    });
    assert.equal(await get('/metrics'), 200);
    assert.equal(await get('/readyz'), 200);
    assert.equal(await get('/'), 200, 'the chat page and its script are open; its calls need the key');
    assert.equal(await get('/chat.js'), 200);
    assert.equal(await get('/nope'), 401);
    assert.equal(await get('/nope', { Authorization: 'Bearer sesame-123' }), 404);
  } finally {
    server.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
