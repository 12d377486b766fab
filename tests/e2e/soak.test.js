// Soak: a few thousand requests mixing normal, cancelled, deadline,
// invalid, oversized and long-prompt calls against a tiny model. Every call
// ends with a status, every OK stream with a finish reason, /metrics counts
// exactly what the clients saw, and memory and descriptors come back.
// SOAK_REQUESTS (default 2000) and SOAK_CONCURRENCY (32) scale it; the
// longer run is scripts/soak.sh.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { grpc, startServer, clients, unary, generate, httpGet, BIN_DIR } = require('./tandem_client');

const REQUESTS = Number(process.env.SOAK_REQUESTS || 2000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY || 32);

// A small deterministic generator, so a failing run can be repeated.
function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}

const procStatus = (pid, key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const openFds = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;

// One call of kind `kind`; resolves with how the client saw it end.
async function oneCall(generation, kind, random) {
  const words = (n) => Array.from({ length: n }, (_, i) => `w${Math.floor(random() * 1000)}x${i}`).join(' ');
  const base = { stopping: { max_tokens: 1 + Math.floor(random() * 20), ignore_eos: true } };
  let request = { ...base, prompt: words(1 + Math.floor(random() * 8)) };
  let options = {};
  if (kind === 'stop') request.stopping = { ...base.stopping, stop_token_ids: [request.stopping.max_tokens % 2 ? 13 : 11] };
  if (kind === 'cancel') request.stopping = { max_tokens: 110, ignore_eos: true };
  if (kind === 'deadline') {
    request.stopping = { max_tokens: 110, ignore_eos: true };
    options.deadlineMs = 40 + Math.floor(random() * 60);
  }
  if (kind === 'invalid') request = [{ prompt: '' }, { ...request, sampling: { top_p: 2 } }, { ...request, stopping: { max_tokens: -1 } }][Math.floor(random() * 3)];
  if (kind === 'oversized') request = { ...request, prompt: 'x'.repeat(5000) };
  if (kind === 'long') request = { prompt_token_ids: Array.from({ length: 100 }, () => Math.floor(random() * 50000)), stopping: { max_tokens: 20, ignore_eos: true } };
  if (kind === 'cancel') options.onData = (r, call) => call.cancel();
  const result = await generate(generation, request, options);
  if (!result.error) {
    const reason = result.last && result.last.finish_reason;
    if (reason === 'FINISH_REASON_STOP') return 'stop';
    if (reason === 'FINISH_REASON_LENGTH') return 'length';
    return `lost: OK without a finish reason (${reason})`;
  }
  switch (result.error.code) {
    case grpc.status.CANCELLED: return 'cancelled';
    case grpc.status.DEADLINE_EXCEEDED: return 'deadline';
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.RESOURCE_EXHAUSTED: return 'rejected';
    default: return `lost: ${result.error.code} ${result.error.details}`;
  }
}

test(`soak: ${REQUESTS} mixed requests, nothing lost, metrics exact, resources back`, { timeout: 600000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-soak-'));
  const made = spawnSync(path.join(BIN_DIR, 'tandem-cli'), ['make-model', `--out=${dir}`, '--size=tiny']);
  assert.equal(made.status, 0, String(made.stderr));
  const server = await startServer([`--model=${dir}`, '--max_slots=8', '--max_queue=64',
    '--max_prompt_bytes=4096', '--metrics_listen=127.0.0.1:0']);
  const { generation } = clients(server.address);
  try {
    // Warm up, then take the baseline.
    await Promise.all(Array.from({ length: 16 }, (_, i) => generate(generation,
      { prompt: `warm ${i}`, stopping: { max_tokens: 20, ignore_eos: true } })));
    const warm = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
    const rss0 = procStatus(server.pid, 'VmRSS') * 1024;
    const fds0 = openFds(server.pid);
    const kinds = [['length', 40], ['stop', 10], ['cancel', 12], ['deadline', 12], ['invalid', 10],
      ['oversized', 6], ['long', 10]];
    const random = rng(20261130);
    const pick = () => {
      let r = random() * 100;
      for (const [kind, weight] of kinds) { if ((r -= weight) < 0) return kind; }
      return 'length';
    };
    const seen = {};
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < REQUESTS) {
        const index = ++next;
        const outcome = await oneCall(generation, pick(), random);
        seen[outcome] = (seen[outcome] || 0) + 1;
        if (index % 1000 === 0) process.stderr.write(`# soak: call ${index}/${REQUESTS} started by ${Date.now() - started} ms\n`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const lost = Object.keys(seen).filter((k) => k.startsWith('lost'));
    assert.deepEqual(lost, [], `every call ends with a status and every OK stream with a finish reason: ${JSON.stringify(seen)}`);
    const total = Object.values(seen).reduce((a, b) => a + b, 0);
    assert.equal(total, REQUESTS);
    // The server's counts (less the warm-up's) equal the clients'.
    const count = (text, reason) => Number((text.split('\n').find((l) =>
      l.startsWith(`tandem_requests_total{finish_reason="${reason}"} `)) || ' NaN').split(' ')[1]);
    let text = '';
    const reasons = ['stop', 'length', 'cancelled', 'deadline', 'rejected', 'error', 'shutdown'];
    for (let i = 0; i < 100; i++) {
      text = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
      const served = reasons.reduce((a, r) => a + count(text, r) - count(warm, r), 0);
      if (served >= REQUESTS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Equal, except for calls that end in a race at their boundary: a
    // stream the server finished (length) just as the client's deadline
    // fired or its cancel went out. Those move between reasons, never out of
    // the total; allow a handful (0.2% of the calls) and report them.
    // Rejections race only one way: a deadline call the server turned away
    // (queue full) whose 40-100 ms deadline fired in the client before the
    // answer was read. The server then counts one more rejection and one
    // less deadline than the clients saw; never the other way round.
    const slack = Math.max(2, Math.ceil(0.002 * REQUESTS));
    const diffs = {};
    let served = 0;
    for (const reason of reasons) {
      const server = count(text, reason) - count(warm, reason);
      served += server;
      diffs[reason] = server - (seen[reason] || 0);
      if (diffs[reason] !== 0) process.stderr.write(`# soak: ${reason} server ${server} vs clients ${seen[reason] || 0}\n`);
      const allowed = ['error', 'shutdown'].includes(reason) ? [0, 0] : reason === 'rejected' ? [0, slack] : [-slack, slack];
      assert.ok(diffs[reason] >= allowed[0] && diffs[reason] <= allowed[1],
        `${reason}: server ${server}, clients ${seen[reason] || 0} (${JSON.stringify(seen)})`);
    }
    assert.ok(diffs.rejected <= Math.max(0, -diffs.deadline),
      `rejections the clients did not see (${diffs.rejected}) are deadline calls the clients saw expire (deadline: server - clients = ${diffs.deadline})`);
    assert.equal(served, REQUESTS, 'every call counted once');
    // Resources come back: descriptors to the baseline, memory within 150 MB.
    await new Promise((r) => setTimeout(r, 1000));
    const rss1 = procStatus(server.pid, 'VmRSS') * 1024;
    const fds1 = openFds(server.pid);
    process.stderr.write(`# soak: ${JSON.stringify(seen)} in ${Date.now() - started} ms; RSS ${(rss0 / 1e6).toFixed(0)} -> ${(rss1 / 1e6).toFixed(0)} MB, fds ${fds0} -> ${fds1}\n`);
    assert.ok(fds1 <= fds0 + 4, `descriptors ${fds0} -> ${fds1}`);
    assert.ok(rss1 - rss0 < 150e6, `RSS ${rss0} -> ${rss1}`);
  } finally {
    server.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
