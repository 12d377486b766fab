#!/usr/bin/env python3
"""Baseline for tandem-bench: Hugging Face transformers generate() on the same
(GPT-2, Llama, Qwen2 or Qwen3)
GPU, same checkpoint, same shapes (prompt 64 random tokens, 256 new tokens,
greedy, EOS ignored). Prints a table and appends JSON lines to --out.

Usage (GPU machine): python3 scripts/bench/hf_generate.py --model DIR --batch 1,64
"""
import argparse
import json
import time

import torch
from transformers import AutoModelForCausalLM


def run(model, batch, prompt_tokens, new_tokens, cache):
    torch.manual_seed(1234)
    ids = torch.randint(0, 50000, (batch, prompt_tokens), device="cuda")
    mask = torch.ones_like(ids)
    kwargs = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                  pad_token_id=0, attention_mask=mask)
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    model.generate(ids, **kwargs)  # warm-up (and compilation, for the static cache)
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = model.generate(ids, **kwargs)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    assert out.shape[1] == prompt_tokens + new_tokens
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch", default="1,64")
    parser.add_argument("--prompt_tokens", type=int, default=64)
    parser.add_argument("--new_tokens", type=int, default=256)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).cuda().eval()
    print(f"{'baseline':28} {'N':>5} {'us/step':>10} {'tokens/s':>12}")
    for cache in ("dynamic", "static"):
        for batch in [int(b) for b in args.batch.split(",")]:
            try:
                elapsed = run(model, batch, args.prompt_tokens, args.new_tokens, cache)
            except Exception as e:  # e.g. a transformers version without static cache
                print(f"transformers {cache:10} {batch:5} failed: {e}")
                continue
            us = 1e6 * elapsed / args.new_tokens
            tps = batch * args.new_tokens / elapsed
            print(f"transformers generate {cache:7} {batch:5} {us:10.1f} {tps:12.0f}", flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps({"model": args.model, "mode": f"transformers_{cache}",
                                        "batch": batch, "us_per_step": us,
                                        "tokens_per_second": tps, "dtype": args.dtype}) + "\n")


if __name__ == "__main__":
    main()
