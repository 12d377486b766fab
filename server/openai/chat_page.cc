#include "server/openai/chat_page.h"

namespace tandem {
namespace {

constexpr char kPage[] = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tandem chat</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; display: flex; height: 100vh; color: #222; }
  aside { width: 15rem; padding: 1rem; background: #f3f3f1; border-right: 1px solid #ddd; overflow: auto; }
  aside label { display: block; margin: .6rem 0 .2rem; font-size: .85rem; color: #555; }
  aside input, aside textarea { width: 100%; box-sizing: border-box; }
  main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
  #log { flex: 1; overflow: auto; padding: 1rem 1.5rem; }
  .msg { margin: .6rem 0; white-space: pre-wrap; }
  .user { font-weight: 600; }
  .assistant .text { background: #f7f7fb; border-radius: .4rem; padding: .4rem .6rem; display: inline-block; }
  .stats { font-size: .75rem; color: #777; margin-top: .15rem; }
  .error { color: #b00; }
  form { display: flex; gap: .5rem; padding: .8rem 1.5rem; border-top: 1px solid #ddd; }
  #prompt { flex: 1; resize: none; height: 3rem; font: inherit; }
  button { font: inherit; padding: 0 1rem; }
</style>
</head>
<body>
<aside>
  <strong>Tandem</strong> <span id="model"></span>
  <label for="system">System prompt</label>
  <textarea id="system" rows="3"></textarea>
  <label for="temperature">Temperature</label>
  <input id="temperature" type="number" min="0" max="2" step="0.1" value="0.7">
  <label for="top_p">Top p</label>
  <input id="top_p" type="number" min="0.01" max="1" step="0.05" value="0.95">
  <label for="max_tokens">Max tokens</label>
  <input id="max_tokens" type="number" min="1" step="1" value="256">
  <label for="api_key">API key (if the server needs one)</label>
  <input id="api_key" type="password" autocomplete="off">
</aside>
<main>
  <div id="log"></div>
  <form id="form">
    <textarea id="prompt" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
    <button id="send" type="submit">Send</button>
    <button id="stop" type="button" disabled>Stop</button>
  </form>
</main>
<script src="chat.js"></script>
</body>
</html>
)HTML";

// The page's script, served apart so that the page's Content-Security-Policy
// can allow scripts from the server only ('self'), none inline.
constexpr char kScript[] = R"JS('use strict';
const $ = (id) => document.getElementById(id);
const history = [];
let controller = null;

function headers() {
  const h = { 'Content-Type': 'application/json' };
  if ($('api_key').value) h.Authorization = 'Bearer ' + $('api_key').value;
  return h;
}

function add(role, text) {
  const div = document.createElement('div');
  div.className = 'msg ' + role;
  const body = document.createElement('div');
  body.className = 'text';
  body.textContent = text;
  div.appendChild(body);
  $('log').appendChild(div);
  $('log').scrollTop = $('log').scrollHeight;
  return div;
}

async function loadModel() {
  try {
    const r = await fetch('v1/models', { headers: headers() });
    const j = await r.json();
    $('model').textContent = j.data ? j.data[0].id : '';
  } catch (e) { /* shown when sending */ }
}

async function send(text) {
  history.push({ role: 'user', content: text });
  add('user', text);
  const out = add('assistant', '');
  const body = out.querySelector('.text');
  const stats = document.createElement('div');
  stats.className = 'stats';
  out.appendChild(stats);
  const messages = [];
  if ($('system').value.trim()) messages.push({ role: 'system', content: $('system').value });
  messages.push(...history);
  controller = new AbortController();
  $('stop').disabled = false;
  $('send').disabled = true;
  const start = performance.now();
  let first = 0, tokens = 0, answer = '', finished = false, failed = false;
  const show = (done) => {
    const ttft = first ? (first - start).toFixed(0) + ' ms' : '…';
    const rate = tokens > 1 && first ? ((tokens - 1) / ((performance.now() - first) / 1000)).toFixed(1) : '…';
    stats.textContent = 'TTFT ' + ttft + ' · ' + tokens + ' tokens · ' + rate + ' tokens/s' + (done ? '' : ' …');
  };
  try {
    const response = await fetch('v1/chat/completions', {
      method: 'POST', headers: headers(), signal: controller.signal,
      body: JSON.stringify({
        messages, stream: true, stream_options: { include_usage: true },
        temperature: Number($('temperature').value), top_p: Number($('top_p').value),
        max_tokens: Number($('max_tokens').value),
      }),
    });
    if (!response.ok) {
      const j = await response.json().catch(() => ({}));
      throw new Error('HTTP ' + response.status + ': ' +
                      ((j.error && j.error.message) || response.statusText || 'no message'));
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!event.startsWith('data: ')) continue;
        const data = event.slice(6);
        if (data === '[DONE]') { finished = true; continue; }
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        if (chunk.usage) tokens = chunk.usage.completion_tokens;
        const delta = chunk.choices.length ? chunk.choices[0].delta : null;
        if (delta && delta.content) {
          if (!first) first = performance.now();
          answer += delta.content;
          tokens += 1;
          body.textContent = answer;
          $('log').scrollTop = $('log').scrollHeight;
        }
        show(false);
      }
    }
    if (!finished) throw new Error('the stream ended before [DONE]');
    show(true);
  } catch (e) {
    if (e.name === 'AbortError') {
      stats.textContent += ' (stopped)';
    } else {
      failed = true;
      const err = document.createElement('div');
      err.className = 'error';
      err.textContent = 'Error: ' + e.message + ' (this exchange is left out of the conversation)';
      out.appendChild(err);
    }
  } finally {
    // A failed exchange, or one stopped before any text, is not sent again
    // with the next message: it would only fill the context.
    if (failed || !answer) history.pop();
    else history.push({ role: 'assistant', content: answer });
    controller = null;
    $('stop').disabled = true;
    $('send').disabled = false;
  }
}

$('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('prompt').value.trim();
  if (!text || controller) return;
  $('prompt').value = '';
  send(text);
});
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('form').requestSubmit(); }
});
$('stop').addEventListener('click', () => { if (controller) controller.abort(); });
$('api_key').addEventListener('change', loadModel);
loadModel();
)JS";

}  // namespace

absl::string_view ChatPageHtml() { return absl::string_view(kPage, sizeof(kPage) - 1); }

absl::string_view ChatPageScript() { return absl::string_view(kScript, sizeof(kScript) - 1); }

}  // namespace tandem
