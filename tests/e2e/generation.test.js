// End-to-end: the real tandem-server binary on the embedded default model,
// driven by @grpc/grpc-js (an independent client) over loopback.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { encode } = require('gpt-3-encoder');
const { grpc, startServer, clients, unary, generate } = require('./tandem_client');

let server;
let generation;
let health;
let reflection;

before(async () => {
  server = await startServer(['--max_slots=8', '--max_queue=64']);
  ({ generation, health, reflection } = clients(server.address));
});

after(async () => {
  server.kill('SIGTERM');
  const { code } = await server.exited;
  assert.equal(code, 0, 'tandem-server exits 0 on SIGTERM');
});

const greedy = (prompt, maxTokens, extra = {}) => ({
  prompt, stopping: { max_tokens: maxTokens, ignore_eos: true }, ...extra,
});

test('the standard health service says SERVING', async () => {
  const response = await unary(health, 'Check', { service: '' });
  assert.equal(response.status, 'SERVING');
});

// One request on the bidirectional reflection stream; resolves with the response.
function reflect(request) {
  return new Promise((resolve, reject) => {
    const call = reflection.ServerReflectionInfo();
    call.on('data', (response) => { resolve(response); call.end(); });
    call.on('error', reject);
    call.write(request);
  });
}

test('server reflection lets generic tools discover the API', async () => {
  const listed = await reflect({ list_services: '' });
  const names = listed.list_services_response.service.map((s) => s.name);
  assert.ok(names.includes('tandem.v1.Generation'), names.join(', '));
  assert.ok(names.includes('grpc.health.v1.Health'), names.join(', '));
  const file = await reflect({ file_containing_symbol: 'tandem.v1.GenerateRequest' });
  const descriptors = file.file_descriptor_response.file_descriptor_proto;
  assert.ok(descriptors.length >= 1);
  assert.ok(Buffer.concat(descriptors).toString('latin1').includes('tandem/v1/generation.proto'));
});

test('GetModelInfo describes the embedded GPT-2', async () => {
  const info = await unary(generation, 'GetModelInfo', {});
  assert.equal(info.architecture, 'gpt2');
  assert.equal(info.vocab_size, 50257);
  assert.equal(info.context_length, 1024);
  assert.equal(info.kv_slots, 8);
  assert.equal(info.device, 'cpu');
  assert.equal(info.eos_token_id, 50256);
  assert.equal(info.num_layers, 12);
  assert.ok(Number(info.kv_cache_bytes) > 0);
});

test('Tokenize matches the gpt-3-encoder reference on text the unit tests never saw', async () => {
  const texts = [
    'Tandem streams tokens while the GPU keeps working.',
    "It's 3:45pm — we'll ship v2.0.1 on 2026-12-01, won't we?",
    'def f(x):\n\treturn {"k": [x ** 2, None]}  # trailing   ',
    'Ünïcödé façade, naïve café; Москва — столица; Αθήνα; 東京都; 🚀🔥',
    '   leading spaces and\n\n\nnew lines\r\n',
    'https://example.com/a/b?c=d&e=%20f#frag user@example.org',
  ];
  for (const text of texts) {
    const response = await unary(generation, 'Tokenize', { text });
    assert.deepEqual(response.token_ids, encode(text), text);
  }
});

test('Detokenize inverts Tokenize', async () => {
  const text = 'Round trip: ½ ∑ 😀 done.';
  const { token_ids } = await unary(generation, 'Tokenize', { text });
  const { text: back } = await unary(generation, 'Detokenize', { token_ids });
  assert.equal(back, text);
});

test('a stream delivers text, ids, usage and timings', async () => {
  const result = await generate(generation, greedy('The quick brown fox', 12, { request_id: 'fox-1' }));
  assert.equal(result.error, null);
  assert.equal(result.ids.length, 12);
  assert.equal(result.last.finish_reason, 'FINISH_REASON_LENGTH');
  assert.equal(result.last.usage.prompt_tokens, encode('The quick brown fox').length);
  assert.equal(result.last.usage.completion_tokens, 12);
  assert.ok(result.last.timings.time_to_first_token_seconds > 0);
  assert.ok(result.responses.every((r) => r.request_id === 'fox-1'));
  const { text } = await unary(generation, 'Detokenize', { token_ids: result.ids });
  assert.equal(result.text, text, 'streamed text equals the text of the streamed ids');
});

test('32 concurrent streams all complete', async () => {
  const results = await Promise.all(Array.from({ length: 32 }, (_, i) =>
    generate(generation, greedy(`Stream number ${i} says`, 6))));
  for (const result of results) {
    assert.equal(result.error, null);
    assert.equal(result.last.finish_reason, 'FINISH_REASON_LENGTH');
    assert.equal(result.ids.length, 6);
  }
});

test('the same seeded request gives the same tokens with different batch mates', async () => {
  const seeded = {
    prompt: 'Once upon a time',
    sampling: { temperature: 0.9, top_p: 0.95, seed: '424242' },
    stopping: { max_tokens: 16, ignore_eos: true },
  };
  const alone = await generate(generation, seeded);
  assert.equal(alone.error, null);
  const crowd = await Promise.all([
    generate(generation, seeded),
    ...Array.from({ length: 5 }, (_, i) => generate(generation, {
      prompt: `Other prompt ${i} with a different length${' x'.repeat(i * 3)}`,
      sampling: { temperature: 1.0, seed: String(i) },
      stopping: { max_tokens: 10 + i, ignore_eos: true },
    })),
  ]);
  assert.deepEqual(crowd[0].ids, alone.ids);
  const other = await generate(generation, { ...seeded, sampling: { ...seeded.sampling, seed: '7' } });
  assert.notDeepEqual(other.ids, alone.ids, 'a different seed gives a different stream');
});

// Packed and chunked prefill: prompts of mixed lengths arriving together,
// while another stream decodes (so the longer ones are split into chunks
// that share steps with the decode rows), each get the greedy tokens they
// get alone.
test('a burst of mixed-length prompts gives each prompt its tokens alone', async () => {
  const prompts = [3, 40, 9, 150, 1, 75].map((words, i) =>
    Array.from({ length: words }, (_, w) => `w${(w * 7 + i) % 50}`).join(' '));
  const alone = [];
  for (const prompt of prompts) {
    const r = await generate(generation, greedy(prompt, 8));
    assert.equal(r.error, null);
    alone.push(r.ids);
  }
  let release;
  const decoding = new Promise((resolve) => { release = resolve; });
  const background = generate(generation, greedy('A stream that keeps decoding', 200),
    { onData: () => release() });
  await decoding;
  const burst = await Promise.all(prompts.map((prompt) => generate(generation, greedy(prompt, 8))));
  for (let i = 0; i < prompts.length; i++) {
    assert.equal(burst[i].error, null);
    assert.deepEqual(burst[i].ids, alone[i], `prompt ${i}`);
  }
  assert.equal((await background).error, null);
});

test('a stop string ends the stream and is not returned', async () => {
  const probe = await generate(generation, greedy('Counting:', 24));
  // Pick a stop string from the middle of the greedy continuation.
  const stop = probe.text.slice(10, 14);
  assert.ok(stop.length > 0);
  const stopped = await generate(generation, greedy('Counting:', 24, {
    stopping: { max_tokens: 24, ignore_eos: true, stop: [stop] },
  }));
  assert.equal(stopped.last.finish_reason, 'FINISH_REASON_STOP');
  assert.equal(stopped.last.stop_sequence, stop);
  assert.equal(stopped.text, probe.text.slice(0, probe.text.indexOf(stop)));
});

test('cancelled streams free their slots', async () => {
  // Fill all 8 slots with very long streams, cancel each after its first
  // chunk; a new request must then get a slot long before they could finish.
  const long = Array.from({ length: 8 }, () => generate(generation,
    greedy('This will be cancelled', 1000), { onData: (r, call) => call.cancel() }));
  const cancelled = await Promise.all(long);
  for (const result of cancelled) assert.equal(result.error.code, grpc.status.CANCELLED);
  const started = Date.now();
  const next = await generate(generation, greedy('After the cancellations', 4), { deadlineMs: 60000 });
  assert.equal(next.error, null);
  assert.equal(next.ids.length, 4);
  assert.ok(Date.now() - started < 60000);
});

test('an expired deadline ends the call and the server carries on', async () => {
  const result = await generate(generation, greedy('Slow', 1000), { deadlineMs: 400 });
  assert.equal(result.error.code, grpc.status.DEADLINE_EXCEEDED);
  const next = await generate(generation, greedy('Still alive', 3));
  assert.equal(next.error, null);
});

test('every bad request is INVALID_ARGUMENT with a message, and nothing breaks', async () => {
  const bad = {
    'empty prompt': { prompt: '' },
    'neither prompt nor ids': { stopping: { max_tokens: 3 } },
    'both prompt and ids': { prompt: 'hi', prompt_token_ids: [1, 2] },
    'prompt longer than the context': { prompt_token_ids: Array(1024).fill(464) },
    'max_tokens beyond the context': { prompt: 'hi', stopping: { max_tokens: 1024 } },
    'negative max_tokens': { prompt: 'hi', stopping: { max_tokens: -1 } },
    'negative temperature': { prompt: 'hi', sampling: { temperature: -1 } },
    'top_p above 1': { prompt: 'hi', sampling: { top_p: 1.5 } },
    'negative top_p': { prompt: 'hi', sampling: { top_p: -0.2 } },
    'negative top_k': { prompt: 'hi', sampling: { top_k: -1 } },
    'token id = vocab size': { prompt_token_ids: [50257] },
    'negative token id': { prompt_token_ids: [-5] },
    'stop token id outside the vocabulary': { prompt: 'hi', stopping: { stop_token_ids: [60000] } },
    '17 stop strings': { prompt: 'hi', stopping: { stop: Array(17).fill('zz') } },
  };
  for (const [name, request] of Object.entries(bad)) {
    const result = await generate(generation, request);
    assert.ok(result.error, `${name}: expected an error`);
    assert.equal(result.error.code, grpc.status.INVALID_ARGUMENT, `${name}: ${result.error.details}`);
    assert.ok(result.error.details.length > 10, `${name}: message "${result.error.details}"`);
  }
  const good = await generate(generation, greedy('Still serving', 2));
  assert.equal(good.error, null);
  // 16 stop strings are the client's, beside the chat template's own.
  const chat = await generate(generation, { messages: [{ role: 'user', content: 'hi' }],
    stopping: { max_tokens: 2, stop: Array.from({ length: 16 }, (_, i) => `zz${i}`) } });
  assert.equal(chat.error, null);
});
