// End-to-end: overload and shutdown behaviour of the real tandem-server.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawnSync } = require('node:child_process');
const { grpc, startServer, clients, generate, BIN_DIR } = require('./tandem_client');

const long = (prompt, maxTokens) => ({ prompt, stopping: { max_tokens: maxTokens, ignore_eos: true } });

test('--help lists each program\'s own flags, not Abseil\'s', () => {
  // Abseil's default --help lists only flags defined in a file named after
  // the binary (none of ours is), so it printed "No flags matched".
  const programs = {
    'tandem-server': ['--model ', '--listen ', '--prefill_stall_ratio ', '--metrics_listen '],
    'tandem-cli': ['--server ', '--max_tokens '],
    'tandem-loadgen': ['--server ', '--request_rate '],
    'tandem-bench': ['--batch ', '--modes '],
  };
  for (const [program, flags] of Object.entries(programs)) {
    const r = spawnSync(path.join(BIN_DIR, program), ['--help'], { encoding: 'utf8' });
    const text = r.stdout + r.stderr;
    assert.doesNotMatch(text, /No flags matched/, program);
    for (const flag of flags) assert.ok(text.includes(flag), `${program} --help lists ${flag}`);
    assert.ok(!text.includes('--flagfile '), `${program} --help leaves Abseil's flags to --helpfull`);
  }
});

test('tandem-cli refuses what it cannot do, with exit 2 and the flag named', () => {
  const cli = (args) => spawnSync(path.join(BIN_DIR, 'tandem-cli'), args, { encoding: 'utf8' });
  for (const [args, message] of [
    [['make-model', '--out=/tmp/never-written', '--layers=-1'], /--layers must be 0/],
    [['make-model', '--out=/tmp/never-written', '--max_shard_mb=-5'], /--max_shard_mb must be 0/],
    [['info', 'extra'], /tandem-cli health/],
  ]) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

test('tandem-bench refuses a bad --batch before it writes a checkpoint or runs a row', () => {
  const workdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-bench-')), 'never');
  const r = spawnSync(path.join(BIN_DIR, 'tandem-bench'), [`--workdir=${workdir}`, '--batch=1,x',
    '--modes=sync_eager', '--new_tokens=2'], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--batch entries are numbers of sequences, 1 or more; got x/);
  assert.deepEqual(fs.readdirSync(path.dirname(workdir)), [], 'no checkpoint was written');
  assert.doesNotMatch(r.stdout, /sync_eager/, 'no row ran');
});

test('a full queue answers RESOURCE_EXHAUSTED', async () => {
  const server = await startServer(['--max_slots=1', '--max_queue=1']);
  const { generation } = clients(server.address);
  let firstChunk;
  const gotChunk = new Promise((resolve) => { firstChunk = resolve; });
  const running = generate(generation, long('Running', 1000), {
    onData: (r, call) => { firstChunk(call); },
  });
  const call = await gotChunk;               // the only slot is taken
  const waiting = generate(generation, long('Waiting', 2));  // the one queue place
  await new Promise((r) => setTimeout(r, 300));
  const rejected = await generate(generation, long('Rejected', 2));
  assert.equal(rejected.error.code, grpc.status.RESOURCE_EXHAUSTED, rejected.error.details);
  call.cancel();
  assert.equal((await running).error.code, grpc.status.CANCELLED);
  assert.equal((await waiting).error, null);
  server.kill('SIGTERM');
  assert.equal((await server.exited).code, 0);
});

test('SIGTERM lets running streams finish, refuses new ones and exits 0', async () => {
  const server = await startServer(['--shutdown_grace=60s']);
  const { generation } = clients(server.address);
  let chunks = 0;
  let late;
  const running = generate(generation, long('Finishing', 24), {
    onData: () => {
      chunks += 1;
      if (chunks === 1) server.kill('SIGTERM');
      // Well after the signal, while this stream is still draining.
      if (chunks === 8) late = generate(generation, long('Too late', 2));
    },
  });
  const result = await running;
  assert.equal(result.error, null);
  assert.equal(result.last.finish_reason, 'FINISH_REASON_LENGTH');
  assert.equal(result.ids.length, 24);
  const refused = await late;
  assert.equal(refused.error.code, grpc.status.UNAVAILABLE, refused.error.details);
  assert.equal((await server.exited).code, 0);
});

// `tandem-cli health` (the container's HEALTHCHECK): its stdout and exit code.
const cliHealth = (address) => new Promise((resolve) => {
  execFile(path.join(BIN_DIR, 'tandem-cli'), ['health', `--server=${address}`, '--timeout=10s'],
    (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
});

test('tandem-cli health: SERVING and exit 0, then NOT_SERVING and exit 1 while draining', async () => {
  const server = await startServer(['--shutdown_grace=60s']);
  const serving = await cliHealth(server.address);
  assert.deepEqual([serving.code, serving.stdout], [0, 'SERVING\n'], serving.stderr);
  const { generation } = clients(server.address);
  let firstChunk;
  const gotChunk = new Promise((resolve) => { firstChunk = resolve; });
  const running = generate(generation, long('Draining', 1000), { onData: (r, call) => firstChunk(call) });
  const call = await gotChunk;
  server.kill('SIGTERM');
  let draining;
  for (const end = Date.now() + 10000; Date.now() < end;) {
    draining = await cliHealth(server.address);
    if (draining.code !== 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual([draining.code, draining.stdout], [1, 'NOT_SERVING\n'], draining.stderr);
  call.cancel();
  await running;
  assert.equal((await server.exited).code, 0);
  const gone = await cliHealth(server.address);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /^error: UNAVAILABLE: /);
});

test('streams that outlive the grace period end with FINISH_REASON_SHUTDOWN', async () => {
  const server = await startServer(['--shutdown_grace=1s']);
  const { generation } = clients(server.address);
  let signalled = false;
  const result = await generate(generation, long('Never finishes in time', 1000), {
    onData: () => { if (!signalled) { signalled = true; server.kill('SIGTERM'); } },
  });
  assert.equal(result.error, null);
  assert.equal(result.last.finish_reason, 'FINISH_REASON_SHUTDOWN');
  assert.ok(result.ids.length < 1000);
  assert.equal((await server.exited).code, 0);
});
