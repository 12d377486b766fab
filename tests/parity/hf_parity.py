#!/usr/bin/env python3
"""Tandem vs Hugging Face transformers, on the GPU machine.

1. Parity table: for each shape ("gpt2", "gpt2-medium", ... or
   "ARCH:SIZE" such as "llama:llama-3.2-1b", "qwen2:qwen2.5-0.5b",
   "qwen3:tiny") and dtype, writes a random checkpoint
   with `tandem-cli make-model` (stored in bf16, so both sides load identical
   values whatever the compute dtype), runs `tandem-parity` (Tandem's real loader and
   model, all prompts decoding together in one batch of mixed lengths) and
   transformers' `AutoModelForCausalLM.from_pretrained` (GPT2LMHeadModel,
   LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM) on the same directory, and
   compares prefill logits (every position), the logits of the first decode
   steps (relative error ||a - b|| / ||b||) and 64 greedy tokens.
2. --fixture DIR: computes, with transformers only, the expected logits and
   greedy tokens for the committed tiny checkpoint in DIR, and writes
   DIR/expected.json for the CPU test tests/core/hf_fixture_test.cc.

Usage: python3 tests/parity/hf_parity.py --bin build-gpu/bin [--sizes ...] [--dtypes ...]
       python3 tests/parity/hf_parity.py --fixture tests/parity/fixture
"""
import argparse
import json
import os
import subprocess

import numpy as np
import torch
from transformers import AutoModelForCausalLM, GPT2LMHeadModel

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 2e-2}


def hf_run(model, prompt, new_tokens, logit_steps, device):
    """Prefill logits [T, V], decode logits [K, V] and greedy tokens, in fp32."""
    ids = torch.tensor([prompt], device=device)
    with torch.no_grad():
        out = model(ids, use_cache=True)
        prefill = out.logits[0].float().cpu().numpy()
        past = out.past_key_values
        token = int(out.logits[0, -1].argmax())
        tokens, decode = [token], []
        for step in range(1, new_tokens):
            out = model(torch.tensor([[token]], device=device), past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1]
            if step <= logit_steps:
                decode.append(logits.float().cpu().numpy())
            token = int(logits.argmax())
            tokens.append(token)
    return prefill, np.array(decode), tokens


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def parity(args):
    rng = np.random.default_rng(7)
    prompts = [rng.integers(0, 50000, n).tolist() for n in (5, 17, 33, 64)]
    os.makedirs(args.workdir, exist_ok=True)
    prompts_file = os.path.join(args.workdir, "prompts.json")
    json.dump({"prompts": prompts}, open(prompts_file, "w"))
    rows = []
    fp32_reference = {}  # (size, prompt index) -> transformers float32 outputs
    print(f"{'size':24} {'dtype':9} {'prefill err':>12} {'decode err':>11} {'tol':>7} greedy (64 tokens x 4 prompts)")
    for size in args.sizes.split(","):
        ckpt = os.path.join(args.workdir, size)
        arch, preset = size.split(":") if ":" in size else ("gpt2", size)
        subprocess.run([f"{args.bin}/tandem-cli", "make-model", f"--out={ckpt}", f"--arch={arch}",
                        f"--size={preset}", "--dtype=bfloat16"], check=True, stdout=subprocess.DEVNULL)
        for dtype in args.dtypes.split(","):
            out = os.path.join(args.workdir, f"{size}-{dtype}.json")
            subprocess.run([f"{args.bin}/tandem-parity", f"--model={ckpt}", f"--prompts={prompts_file}",
                            f"--out={out}", "--device=cuda", f"--dtype={dtype}",
                            f"--new_tokens={args.new_tokens}", f"--logit_steps={args.logit_steps}"],
                           check=True)
            meta = json.load(open(out))
            flat = np.fromfile(out + ".bin", dtype=np.float32).reshape(-1, meta["vocab"])
            model = AutoModelForCausalLM.from_pretrained(ckpt, torch_dtype=DTYPES[dtype]).cuda().eval()
            prefill_err = decode_err = 0.0
            # 16-bit: both sides against transformers in float32 (the exact
            # model), and transformers' own 16-bit error as the floor.
            ours_vs_fp32 = hf_vs_fp32 = 0.0
            divergences = []
            row = 0
            for p, (prompt, ours) in enumerate(zip(prompts, meta["prompts"])):
                t, k = ours["prefill_rows"], ours["decode_rows"]
                hf_prefill, hf_decode, hf_tokens = hf_run(model, prompt, args.new_tokens, args.logit_steps, "cuda")
                if dtype == "float32":
                    fp32_reference[(size, p)] = (hf_prefill, hf_decode, hf_tokens)
                prefill_err = max(prefill_err, rel(flat[row:row + t], hf_prefill))
                ref = fp32_reference.get((size, p))
                if ref is not None and dtype != "float32":
                    ours_vs_fp32 = max(ours_vs_fp32, rel(flat[row:row + t], ref[0]))
                    hf_vs_fp32 = max(hf_vs_fp32, rel(hf_prefill, ref[0]))
                row += t
                first_diff = next((i for i, (a, b) in enumerate(zip(ours["tokens"], hf_tokens)) if a != b), None)
                # Decode logits are comparable while both saw the same tokens.
                steps = k if first_diff is None else min(k, first_diff)
                for s in range(steps):
                    decode_err = max(decode_err, rel(flat[row + s], hf_decode[s]))
                if ref is not None and dtype != "float32":
                    same_as_fp32 = next((i for i, (a, b) in enumerate(zip(ours["tokens"], ref[2])) if a != b), k)
                    hf_same = next((i for i, (a, b) in enumerate(zip(hf_tokens, ref[2])) if a != b), k)
                    for s in range(min(k, same_as_fp32, hf_same)):
                        ours_vs_fp32 = max(ours_vs_fp32, rel(flat[row + s], ref[1][s]))
                        hf_vs_fp32 = max(hf_vs_fp32, rel(hf_decode[s], ref[1][s]))
                row += k
                divergences.append(first_diff)
            greedy = "identical" if all(d is None for d in divergences) else \
                "first divergence at step " + ",".join("-" if d is None else str(d) for d in divergences)
            # 16-bit: as close to the exact (fp32) model as transformers' own
            # 16-bit run is (within 20 %), or within the fixed tolerance of it.
            ok = (prefill_err <= TOLERANCE[dtype] and decode_err <= TOLERANCE[dtype]) or \
                (dtype != "float32" and ours_vs_fp32 <= 1.2 * hf_vs_fp32)
            vs_fp32 = "" if dtype == "float32" else \
                f"  vs fp32: tandem {ours_vs_fp32:.2e}, transformers {hf_vs_fp32:.2e}"
            print(f"{size:24} {dtype:9} {prefill_err:12.2e} {decode_err:11.2e} {TOLERANCE[dtype]:7.0e} "
                  f"{greedy}{'' if ok else '  OVER TOLERANCE'}{vs_fp32}", flush=True)
            rows.append({"size": size, "dtype": dtype, "prefill_rel_err": prefill_err,
                         "decode_rel_err": decode_err, "tolerance": TOLERANCE[dtype], "ok": ok,
                         "greedy_first_divergence": divergences,
                         "tandem_vs_fp32_rel_err": ours_vs_fp32 if dtype != "float32" else None,
                         "transformers_vs_fp32_rel_err": hf_vs_fp32 if dtype != "float32" else None})
            del model
            torch.cuda.empty_cache()
    if args.out:
        json.dump(rows, open(args.out, "w"), indent=1)


def fixture(args):
    directory = args.fixture
    spec = json.load(open(os.path.join(directory, "prompts.json")))
    model = GPT2LMHeadModel.from_pretrained(directory, torch_dtype=torch.float32).eval()
    expected = {"source": f"transformers {__import__('transformers').__version__}, torch {torch.__version__}, "
                          "float32 on the CPU", "prompts": []}
    for prompt in spec["prompts"]:
        prefill, decode, tokens = hf_run(model, prompt, spec["new_tokens"], spec["logit_steps"], "cpu")
        expected["prompts"].append({
            "prompt": prompt, "tokens": tokens,
            "prefill_logits": [[float(f"{v:.7g}") for v in r] for r in prefill],
            "decode_logits": [[float(f"{v:.7g}") for v in r] for r in decode]})
    json.dump(expected, open(os.path.join(directory, "expected.json"), "w"))
    print("wrote", os.path.join(directory, "expected.json"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build-gpu/bin")
    parser.add_argument("--sizes", default="gpt2,gpt2-medium,gpt2-large,gpt2-xl")
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    parser.add_argument("--workdir", default="/tmp/tandem-parity")
    parser.add_argument("--new_tokens", type=int, default=64)
    parser.add_argument("--logit_steps", type=int, default=8)
    parser.add_argument("--out", default="")
    parser.add_argument("--fixture", default="")
    args = parser.parse_args()
    fixture(args) if args.fixture else parity(args)
