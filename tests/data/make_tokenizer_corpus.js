// Writes tests/data/tokenizer_corpus.json: texts and the ids that the
// reference GPT-2 encoder (npm gpt-3-encoder@1.1.4) gives them.
const fs = require('fs');
const { encode } = require('../e2e/node_modules/gpt-3-encoder');
const texts = [
  "The quick brown fox jumps over the lazy dog.",
  "I'm sure you'll agree it's what they'd've wanted; we're done, aren't we?",
  "Numbers: 0 1 12 123 1234 12345 3.14159 -42 1e10 2026-11-29 $19.99 50% 1,000,000",
  "https://www.example.com/path/to/page?query=value&other=42#section",
  "user.name+tag@example.co.uk, ftp://files.example.org/pub/file.tar.gz",
  "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
  "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
  "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
  "    leading spaces, trailing spaces    ",
  "tabs\t\tand\ttabs\t",
  "\n\nnewlines\n\n\nbetween\n",
  "mixed \t \n whitespace \r\n runs   \n\t  end",
  "Crème brûlée, façade, naïve, coöperate, São Paulo, Zürich, Ångström, Łódź",
  "Привет, как дела? Москва — столица России.",
  "Καλημέρα κόσμε· Η Αθήνα είναι η πρωτεύουσα.",
  "東京は日本の首都です。北京是中国的首都。",
  "안녕하세요, 세계!",
  "مرحبا بالعالم. القاهرة عاصمة مصر.",
  "שלום עולם. ירושלים.",
  "नमस्ते दुनिया। भारत की राजधानी नई दिल्ली है।",
  "Emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 ❤️ 🤖",
  "Symbols: © ® ™ € £ ¥ ° ± × ÷ ∑ ∫ √ ∞ ≠ ≤ ≥ → ⇒ ♠ ♥",
  "ALL CAPS SENTENCE WITH ACRONYMS LIKE NASA AND GPU.",
  "CamelCaseIdentifiers and snake_case_names and kebab-case-words",
  "a  b   c    d     e",
  "'s 't 're 've 'm 'll 'd 'S 'T",
  "...!!!???,,,;;;:::---___===+++***",
  "Line one.\r\nLine two.\r\n",
  "Ünïcödé\u00a0non-breaking\u2003em-space\u3000ideographic-space",
  "Zero\u200bwidth\u200bspace and combining e\u0301 a\u0308",
];
const cases = texts.map((text) => ({ text, ids: encode(text) }));
fs.writeFileSync(process.argv[2], JSON.stringify({
  source: "ids from the npm package gpt-3-encoder@1.1.4 (GPT-2's reference BPE in JavaScript), tests/data/make_tokenizer_corpus.js",
  cases }, null, 1) + "\n");
