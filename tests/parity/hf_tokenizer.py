#!/usr/bin/env python3
"""Tokenizer fidelity against transformers (GPU machine, or anywhere it is installed).

Builds transformers' GPT2TokenizerFast from the same vocab.json/merges.txt
Tandem embeds (third_party/gpt2/) and encodes every text of the committed
corpus tests/data/tokenizer_corpus.json, whose ids come from the npm
gpt-3-encoder package and which the CPU test tokenizer_corpus_test checks
Tandem against. Prints one line per text and exits non-zero on any mismatch.

Usage: python3 tests/parity/hf_tokenizer.py [--vocab_dir third_party/gpt2]
"""
import argparse
import json
import sys

from transformers import GPT2TokenizerFast


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab_dir", default="third_party/gpt2")
    p.add_argument("--corpus", default="tests/data/tokenizer_corpus.json")
    args = p.parse_args()
    # The directory holds only vocab.json and merges.txt, as GPT-2 checkpoints do.
    tok = GPT2TokenizerFast.from_pretrained(args.vocab_dir)
    cases = json.load(open(args.corpus))["cases"]
    mismatches = 0
    for case in cases:
        ids = tok.encode(case["text"])
        same = ids == case["ids"] and len(ids) > 0
        mismatches += not same
        print(f"{'same' if same else 'DIFF'} {len(ids):4d} ids  {case['text'][:50]!r}")
        if not same:
            print(f"   transformers {ids}\n   gpt-3-encoder {case['ids']}")
    print(f"transformers GPT2TokenizerFast vs gpt-3-encoder: {len(cases) - mismatches}/{len(cases)} texts identical")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
