// End-to-end: the OpenAI-compatible API of the real tandem-server (embedded
// GPT-2 on the CPU), driven by the official `openai` npm SDK, plus a raw
// server-sent-events check that does not go through the SDK.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { default: OpenAI } = require('openai');
const { startServer, clients, generate, httpGet, metricSample: sample } = require('./tandem_client');

let server;
let client;
let generation;
let model;

before(async () => {
  server = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=4', '--max_queue=2']);
  client = new OpenAI({ baseURL: `http://${server.metricsAddress}/v1`, apiKey: 'any key is accepted', maxRetries: 0 });
  ({ generation } = clients(server.address));
  model = (await client.models.list()).data[0].id;
});

after(async () => {
  server.kill('SIGTERM');
  await server.exited;
});


test('GET /v1/models lists the served model with its context length', async () => {
  const { data } = await client.models.list();
  assert.equal(data.length, 1);
  assert.equal(data[0].object, 'model');
  assert.equal(data[0].max_model_len, 1024);
  assert.equal(data[0].id, 'gpt2-random');  // the embedded default model's name
  // models.retrieve: GET /v1/models/{id}; another id is model_not_found.
  const one = await client.models.retrieve(data[0].id);
  assert.equal(one.id, 'gpt2-random');
  assert.deepEqual(one, data[0]);
  await assert.rejects(client.models.retrieve('gpt-17'), (e) => {
    assert.equal(e.status, 404);
    assert.equal(e.error.code, 'model_not_found');
    return true;
  });
});

test('completions, whole and streamed, agree and count usage', async () => {
  const whole = await client.completions.create({ model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0, ignore_eos: true });
  assert.equal(whole.object, 'text_completion');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 8);
  assert.ok(whole.usage.prompt_tokens > 0);
  const stream = await client.completions.create({ model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let chunks = 0;
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) { text += c.text; chunks++; if (c.finish_reason) finish = c.finish_reason; }
  }
  assert.equal(text, whole.choices[0].text);
  assert.ok(chunks >= 3, `streamed in ${chunks} chunks`);
  assert.equal(finish, 'length');
  assert.deepEqual(usage, whole.usage);
});

test('chat completions, whole and streamed, with the plain-text template', async () => {
  const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello.' }];
  const whole = await client.chat.completions.create({ model, messages, max_tokens: 6, temperature: 0, ignore_eos: true });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  const stream = await client.chat.completions.create({ model, messages, max_completion_tokens: 6, temperature: 0, ignore_eos: true, stream: true });
  let text = '';
  let first = true;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (first) { assert.equal(c.delta.role, 'assistant', 'the first delta carries the role'); first = false; }
    text += c.delta.content || '';
  }
  assert.equal(text, whole.choices[0].message.content);
  // The template's prompt: "System: ...\n\nUser: ...\n\nAssistant:" (GPT-2 tokens).
  const { token_ids: ids } = await new Promise((resolve, reject) => generation.Tokenize(
    { text: 'System: You are terse.\n\nUser: Say hello.\n\nAssistant:' }, (e, r) => (e ? reject(e) : resolve(r))));
  assert.equal(whole.usage.prompt_tokens, ids.length);
});

test('n > 1 gives n choices; stop ends a choice without the stop text', async () => {
  const many = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5, n: 3, temperature: 1, seed: 5 });
  assert.equal(many.choices.length, 3);
  assert.deepEqual(many.choices.map((c) => c.index).sort(), [0, 1, 2]);
  assert.equal(many.usage.completion_tokens, many.choices.length * 5);
  const probe = await client.completions.create({ model, prompt: 'Counting:', max_tokens: 12, temperature: 0, ignore_eos: true });
  const text = probe.choices[0].text;
  const stop = text.slice(4, 7);
  const stopped = await client.completions.create({ model, prompt: 'Counting:', max_tokens: 12, temperature: 0, ignore_eos: true, stop: [stop] });
  assert.equal(stopped.choices[0].finish_reason, 'stop');
  assert.equal(stopped.choices[0].text, text.slice(0, text.indexOf(stop)));
});

test('a seed gives the same text twice, and the tokens the gRPC API gives', async () => {
  const request = { model, prompt: 'In the beginning', max_tokens: 10, temperature: 0.9, top_p: 0.95, seed: 424242, ignore_eos: true, logprobs: 0 };
  const a = await client.completions.create(request);
  const b = await client.completions.create(request);
  assert.equal(a.choices[0].text, b.choices[0].text);
  assert.equal(a.choices[0].logprobs.token_logprobs.length, 10);
  const grpc = await generate(generation, {
    prompt: 'In the beginning',
    sampling: { temperature: 0.9, top_p: 0.95, seed: '424242' },
    stopping: { max_tokens: 10, ignore_eos: true },
    return_logprobs: true,
  });
  assert.equal(grpc.error, null);
  assert.equal(a.choices[0].text, grpc.text);
  const grpcLogprobs = grpc.responses.flatMap((r) => r.logprobs);
  a.choices[0].logprobs.token_logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - grpcLogprobs[i]) < 1e-5));
});

test('streamed log-probabilities are the whole response\'s, chunk by chunk', async () => {
  const request = { model, prompt: 'Once upon a time', max_tokens: 9, temperature: 0.7, seed: 99, ignore_eos: true, logprobs: 0 };
  const whole = await client.completions.create(request);
  const tokens = [];
  const values = [];
  let text = '';
  for await (const chunk of await client.completions.create({ ...request, stream: true })) {
    for (const c of chunk.choices) {
      text += c.text;
      if (c.logprobs) { tokens.push(...c.logprobs.tokens); values.push(...c.logprobs.token_logprobs); }
    }
  }
  assert.equal(text, whole.choices[0].text);
  assert.deepEqual(tokens, whole.choices[0].logprobs.tokens);
  assert.equal(values.length, 9);
  values.forEach((v, i) => assert.ok(Math.abs(v - whole.choices[0].logprobs.token_logprobs[i]) < 1e-6));
  assert.ok(values.every((v) => v <= 0 && Number.isFinite(v)));
  // Chat: the same per token under choices[].logprobs.content.
  const messages = [{ role: 'user', content: 'Hi' }];
  const chatWhole = await client.chat.completions.create({ model, messages, max_tokens: 5, temperature: 0, ignore_eos: true, logprobs: true });
  const streamed = [];
  for await (const chunk of await client.chat.completions.create({ model, messages, max_tokens: 5, temperature: 0, ignore_eos: true, logprobs: true, stream: true })) {
    for (const c of chunk.choices) if (c.logprobs) streamed.push(...c.logprobs.content);
  }
  assert.deepEqual(streamed.map((e) => e.token), chatWhole.choices[0].logprobs.content.map((e) => e.token));
  assert.equal(streamed.length, 5);
});

test('the gRPC chat entry renders messages as /v1/chat/completions does', async () => {
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a colour.' }];
  const chat = await client.chat.completions.create({ model, messages, max_tokens: 7, temperature: 0, ignore_eos: true });
  const grpc = await generate(generation, { messages, stopping: { max_tokens: 7, ignore_eos: true } });
  assert.equal(grpc.error, null);
  assert.equal(grpc.text, chat.choices[0].message.content);
  assert.equal(grpc.responses.at(-1).usage.prompt_tokens, chat.usage.prompt_tokens);
  const both = await generate(generation, { prompt: 'x', messages, stopping: { max_tokens: 1 } });
  assert.equal(both.error.code, 3);  // INVALID_ARGUMENT
  assert.match(both.error.details, /exactly one of prompt, prompt_token_ids and messages/);
  const badRole = await generate(generation, { messages: [{ role: 'tool', content: 'x' }], stopping: { max_tokens: 1 } });
  assert.equal(badRole.error.code, 3);
  assert.match(badRole.error.details, /role "tool"/);
});

test('errors are OpenAI error objects with the right status', async () => {
  const expectError = async (promise, status, check) => {
    await assert.rejects(promise, (e) => {
      assert.equal(e.status, status, e.message);
      if (check) check(e);
      return true;
    });
  };
  await expectError(client.completions.create({ model, prompt: 'x', temperature: 7 }), 400,
    (e) => { assert.equal(e.error.param, 'temperature'); assert.equal(e.error.type, 'invalid_request_error'); });
  await expectError(client.completions.create({ model, prompt: 'x', max_tokens: 5000 }), 400,
    (e) => assert.equal(e.error.param, 'max_tokens'));
  // The message names the client's field too, not the engine's.
  await expectError(client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 5000 }), 400,
    (e) => {
      assert.equal(e.error.param, 'max_completion_tokens');
      assert.match(e.error.message, /^max_completion_tokens = 5000 does not fit/);
    });
  await expectError(client.completions.create({ model, prompt: [11, 50257], max_tokens: 1 }), 400,
    (e) => {
      assert.equal(e.error.param, 'prompt');
      assert.match(e.error.message, /^prompt\[1\] = 50257 is outside the vocabulary/);
    });
  await expectError(client.completions.create({ model, prompt: Array(1024).fill(11), max_tokens: 1 }), 400,
    (e) => assert.equal(e.error.param, 'prompt'));
  await expectError(client.completions.create({ model, prompt: 'x', stop: Array(17).fill('zz') }), 400,
    (e) => assert.equal(e.error.param, 'stop'));
  await expectError(client.completions.create({ model, prompt: 'x', stop: ['a', ''] }), 400,
    (e) => assert.equal(e.error.param, 'stop'));
  // An empty list is no stop strings (clients send it); 16 are a client's to
  // use, beside the chat template's own.
  assert.equal((await client.completions.create({ model, prompt: 'x', stop: [], max_tokens: 2 })).choices.length, 1);
  const sixteen = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }],
    stop: Array.from({ length: 16 }, (_, i) => `zz${i}`), max_tokens: 2 });
  assert.equal(sixteen.choices.length, 1);
  // A content part whose type is not a string, and a seed past int64: 400s
  // (the first was a 500, the second wrapped to one seed).
  const part = await post('/v1/chat/completions', JSON.stringify({ model, messages: [{ role: 'user', content: [{ type: null, text: 'hi' }] }] }));
  assert.equal(part.status, 400);
  assert.equal(JSON.parse(part.body).error.param, 'messages[0].content');
  const seed = await post('/v1/completions', `{"model": "${model}", "prompt": "x", "seed": 9223372036854775808}`);
  assert.equal(seed.status, 400);
  assert.equal(JSON.parse(seed.body).error.param, 'seed');
  await expectError(client.chat.completions.create({ model, messages: [] }), 400, (e) => assert.equal(e.error.param, 'messages'));
  await expectError(client.chat.completions.create({ model, messages: [{ role: 'robot', content: 'hi' }] }), 400);
  await expectError(client.completions.create({ model: 'gpt-17', prompt: 'x' }), 404, (e) => assert.equal(e.error.code, 'model_not_found'));
  // Malformed JSON and an unknown path, without the SDK.
  const raw = await post('/v1/completions', '{"prompt": ');
  assert.equal(raw.status, 400);
  assert.equal(JSON.parse(raw.body).error.type, 'invalid_request_error');
  assert.equal((await httpGet(`http://${server.metricsAddress}/v1/nothing`)).status, 404);
  const big = await post('/v1/completions', JSON.stringify({ model, prompt: 'x'.repeat(2 << 20) }));
  assert.equal(big.status, 413);
  // Queue full: 4 slots, 2 waiting places, 8 long requests at once.
  const results = await Promise.allSettled(Array.from({ length: 8 }, () =>
    client.completions.create({ model, prompt: 'Keep going', max_tokens: 40, ignore_eos: true })));
  const refused = results.filter((r) => r.status === 'rejected');
  assert.ok(refused.length >= 1, 'some were refused');
  for (const r of refused) assert.equal(r.reason.status, 429);
});

// A POST on a connection of its own (agent: false), to `address` (default:
// the first server's HTTP port), abortable with `signal`.
function post(path, body, { address = server.metricsAddress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const [host, port] = address.split(':');
    const req = http.request({ host, port, path, method: 'POST', agent: false, signal, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('raw SSE framing: data events, the usage chunk, then [DONE]', async () => {
  const res = await post('/v1/chat/completions', JSON.stringify({
    model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5, temperature: 0, ignore_eos: true,
    stream: true, stream_options: { include_usage: true },
  }));
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'], /^text\/event-stream/);
  assert.equal(res.headers['x-accel-buffering'], 'no', 'a proxy passes each event on at once');
  const events = res.body.split('\n\n');
  assert.equal(events.pop(), '', 'the body ends with a blank line');
  for (const e of events) assert.match(e, /^data: /);
  assert.equal(events[events.length - 1], 'data: [DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  const usage = chunks[chunks.length - 1];
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.completion_tokens, 5);
  const finals = chunks.filter((c) => c.choices.length && c.choices[0].finish_reason);
  assert.equal(finals.length, 1);
  assert.equal(finals[0].choices[0].finish_reason, 'length');
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  for (const c of chunks) assert.equal(c.object, 'chat.completion.chunk');
});

test('aborting a stream mid-way cancels its generation and frees the slot', async () => {
  const before = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model, messages: [{ role: 'user', content: 'Tell a long story' }], max_tokens: 500, ignore_eos: true, stream: true },
    { signal: controller.signal });
  let received = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) received++;
    if (received === 3) {
      controller.abort();  // closes the connection
      break;
    }
  }
  assert.equal(received, 3);
  await expectOneCancellation(before, 500);
});

// Waits (up to 5 s) until /metrics shows nothing running and a cancellation
// since `before` (an earlier /metrics text), then checks exactly one was
// counted and fewer than `maxTokens` tokens were generated meanwhile.
async function expectOneCancellation(before, maxTokens) {
  const cancelled = (text) => sample(text, 'tandem_requests_total{finish_reason="cancelled"}');
  let text = '';
  for (let i = 0; i < 50; i++) {
    text = (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
    if (sample(text, 'tandem_requests_running') === 0 && cancelled(text) > cancelled(before)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(cancelled(text), cancelled(before) + 1);
  assert.equal(sample(text, 'tandem_requests_running'), 0);
  assert.ok(sample(text, 'tandem_generation_tokens_total') - sample(before, 'tandem_generation_tokens_total') < maxTokens);
}

test('a whole (not streamed) request whose client leaves is cancelled', async () => {
  const metrics = async () => (await httpGet(`http://${server.metricsAddress}/metrics`)).body;
  const before = await metrics();
  const controller = new AbortController();
  const pending = client.completions.create(
    { model, prompt: 'Tell a long story', max_tokens: 900, ignore_eos: true },
    { signal: controller.signal });
  pending.catch(() => {});
  let text = await metrics();
  for (let i = 0; i < 100 && sample(text, 'tandem_requests_running') !== 1; i++) {
    await new Promise((r) => setTimeout(r, 50));
    text = await metrics();
  }
  assert.equal(sample(text, 'tandem_requests_running'), 1, 'the request is generating');
  controller.abort();  // closes the connection before any byte of the answer
  await assert.rejects(pending);
  await expectOneCancellation(before, 900);
});

// A server whose engine holds 1 + 130 requests: 140 whole requests at once
// hold 131 HTTP connections while they run or wait, and the 9 left over must
// still reach the engine to be refused (429), as a probe must be answered:
// the default HTTP pool has a thread for each (with 128 threads, the old
// default, neither was answered until a request ended).
test('a full queue is answered over HTTP with 429, and /healthz still answers', async () => {
  const crowd = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=1', '--max_queue=130']);
  const controller = new AbortController();
  require('node:events').setMaxListeners(200, controller.signal);  // one signal, 140 requests
  try {
    const body = JSON.stringify({ model, prompt: 'Keep going', max_tokens: 900, ignore_eos: true });
    const refused = [];
    const all = Array.from({ length: 140 }, () =>
      post('/v1/completions', body, { address: crowd.metricsAddress, signal: controller.signal })
        .then((r) => { if (r.status === 429) refused.push(r); return r; }, () => null));
    for (let i = 0; i < 200 && refused.length < 9; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(refused.length, 9, 'the requests over 1 + 130 were refused within 10 s');
    assert.equal(JSON.parse(refused[0].body).error.type, 'rate_limit_error');
    assert.equal(refused[0].headers['retry-after'], '1', 'the SDKs wait a second before their retry');
    const start = Date.now();
    assert.equal((await httpGet(`http://${crowd.metricsAddress}/healthz`)).status, 200);
    assert.ok(Date.now() - start < 2000, '/healthz answered at once');
    controller.abort();
    await Promise.all(all);
  } finally {
    controller.abort();
    crowd.kill('SIGKILL');
    await crowd.exited;
  }
});

// A second server: an API key, CORS for one origin, and a drain.
test('401 without the API key, CORS for the listed origin, 503 while draining', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-key-')), 'key');
  fs.writeFileSync(keyFile, 'sesame\n');
  const other = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=1',
    `--api_key_file=${keyFile}`, '--cors_allow_origins=http://chat.example', '--shutdown_grace=30s']);
  try {
    const base = `http://${other.metricsAddress}/v1`;
    const wrong = new OpenAI({ baseURL: base, apiKey: 'wrong', maxRetries: 0 });
    await assert.rejects(wrong.models.list(), (e) => {
      assert.equal(e.status, 401);
      assert.equal(e.error.type, 'authentication_error');
      return true;
    });
    const right = new OpenAI({ baseURL: base, apiKey: 'sesame', maxRetries: 0 });
    const name = (await right.models.list()).data[0].id;
    // CORS: the preflight needs no key; the listed origin is echoed, others are not.
    const preflight = await fetch(`${base}/chat/completions`, { method: 'OPTIONS', headers: {
      Origin: 'http://chat.example', 'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://chat.example');
    assert.match(preflight.headers.get('access-control-allow-methods'), /POST/);
    const allowed = await fetch(`${base}/models`, { headers: { Origin: 'http://chat.example', Authorization: 'Bearer sesame' } });
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'http://chat.example');
    const foreign = await fetch(`${base}/models`, { headers: { Origin: 'http://evil.example', Authorization: 'Bearer sesame' } });
    assert.equal(foreign.status, 200);
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    // Draining: a running stream holds the only slot; after SIGTERM new requests get 503.
    const stream = await right.chat.completions.create(
      { model: name, messages: [{ role: 'user', content: 'Go on' }], max_tokens: 60, ignore_eos: true, stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    other.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await assert.rejects(right.completions.create({ model: name, prompt: 'late', max_tokens: 2 }),
      (e) => { assert.equal(e.status, 503); return true; });
    let rest = 0;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest++;
    assert.ok(rest > 0, 'the running stream finished during the drain');
  } finally {
    other.kill('SIGKILL');
    await other.exited;
  }
});
