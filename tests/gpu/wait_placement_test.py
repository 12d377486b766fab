#!/usr/bin/env python3
"""Checks in the compiled SASS that kernels read their weights before the
programmatic-launch wait (kernel::WaitForPreviousKernel, SASS ACQBULK).

The source of these kernels issues its weight loads before the wait so that
they stream while the previous kernel ends; ptxas once scheduled the wait
ahead of them (docs/results/bench/2026-12-01-h200-wait-placement/), which
cost the Llama-3.2-1B one-row step 36 us and GPT-2 small's 13 us without any
test noticing. Per function of the families below, this counts the global
loads (LDG) before the first ACQBULK and fails when there are fewer than the
source issues there:

  GemvKernel<T, GemvShape<threads, cols, unroll, one group>, ...>: cols * unroll
  FusedLinearKernel, LmHeadKernel, SkinnyLinearKernel: 1
  FusedLinearKernel with its LayerNorm weights in registers (kNormInRegisters)
      and kWarpCols columns a warp: 2 * V + V * kWarpCols - kChunk more than
      the kernel of the same element type and rows without a LayerNorm and
      with K at run time (the lane's V vectors of LayerNorm weight and bias,
      and of each column's weights, where that kernel loads its column's
      kChunk); and at least one such kernel must be found
  RowLayerNormKernel: 2 (its LayerNorm weight and bias)
  RowLmHeadKernel<T, kNorm, kGreedy, kK>: V (its first column's weights; its
      LayerNorm weight and bias load after the wait, beside x)
  ClusterLinearKernel: 1 asynchronous copy to shared memory (LDGSTS)
  WgmmaLinearKernel: 2, its weight tile's bulk tensor copy (UTMALDG) and its bias

V, the vectors a lane loads of a row of K elements: kChunk (4) where K is a
run-time argument (kK = 0: the loads beyond K are predicated off), else K
compiled in (kernel::WithCompiledK) over 32 lanes' 16-byte vectors.

Usage: wait_placement_test.py (--cuobjdump PATH LIBRARY | --sass FILE...)
"""
import argparse
import re
import subprocess
import sys

FAMILIES = ("GemvKernel", "FusedLinearKernel", "RowLmHeadKernel", "LmHeadKernel",
            "SkinnyLinearKernel", "ClusterLinearKernel", "RowLayerNormKernel",
            "WgmmaLinearKernel")
GEMV_SHAPE = re.compile(r"GemvShapeILi(\d+)ELi(\d+)ELi(\d+)ELb[01]EE")
CHUNK = 4  # kChunk (projection.cuh): the vectors a lane loads of each weight row
# RowLmHeadKernel<T, kNorm, kGreedy, kK>'s template arguments.
ROW_LM_HEAD = re.compile(r"RowLmHeadKernelI(\w+?)Lb([01])ELb([01])ELi(\d+)EE")
# FusedLinearKernel<T, kRows, kNorm, kEpilogue, kNormInRegisters, kWarpCols, kK>'s
# template arguments.
FUSED_LINEAR = re.compile(
    r"FusedLinearKernelI(\w+?)Li(\d+)ELb([01])ELNS_14LinearEpilogueE(\d+)ELb([01])ELi(\d+)"
    r"ELi(\d+)EE")


def lane_vectors(dtype, compiled_k):
    """V: the 16-byte vectors a lane loads of a row (dtype as mangled: f, 6__half,
    13__nv_bfloat16; compiled_k: the kK template argument, "0" for K at run time)."""
    if compiled_k == "0":
        return CHUNK
    elements = 8 if dtype.endswith(("half", "bfloat16")) else 4
    return int(compiled_k) // (32 * elements)


def functions(sass):
    """Yields (mangled name, architecture, [instruction lines]) per function of
    cuobjdump -sass (a library built for several architectures lists a kernel
    once per architecture, after an "arch = sm_XX" line)."""
    arch, name, body = "", None, []
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        arch_line = re.match(r"\s*arch = (\S+)", line)
        if match or arch_line:
            if name is not None:
                yield name, arch, body
            name, body = None, []
        if arch_line:
            arch = arch_line.group(1)
        elif match:
            name = match.group(1)
        elif name is not None and re.search(r"/\*[0-9a-f]{4,}\*/", line) and ";" in line:
            body.append(line)
    if name is not None:
        yield name, arch, body


def loads_before_wait(body):
    """The LDG (or LDGSTS: cp.async; UTMALDG: a TMA copy) instructions before
    the first ACQBULK, or None without one."""
    count = 0
    for line in body:
        if "ACQBULK" in line:
            return count
        if re.search(r"\b(LDG(STS)?|UTMALDG)(\.|\s)", line):
            count += 1
    return None


def expected_loads(name):
    family = next((f for f in FAMILIES if f in name), None)
    if family is None:
        return None
    if family == "GemvKernel":
        shape = GEMV_SHAPE.search(name)
        return int(shape.group(2)) * int(shape.group(3)) if shape else 1
    if family in ("RowLayerNormKernel", "WgmmaLinearKernel"):
        return 2
    if family == "RowLmHeadKernel":
        args = ROW_LM_HEAD.search(name)
        return lane_vectors(args.group(1), args.group(4)) if args else CHUNK
    return 1


def check(sass):
    checked, failures = 0, []
    fused = {}  # (architecture, FusedLinearKernel's template arguments) -> loads before the wait
    for name, arch, body in functions(sass):
        want = expected_loads(name)
        if want is None:
            continue
        checked += 1
        got = loads_before_wait(body)
        if got is None:
            failures.append(f"{name}: no griddepcontrol.wait (ACQBULK) in its SASS")
        elif got < want:
            failures.append(f"{name}: {got} loads before the wait, the source issues {want}")
        if "GemvKernel" in name and not GEMV_SHAPE.search(name):
            failures.append(f"{name}: its GemvShape does not match GEMV_SHAPE")
        if "RowLmHeadKernel" in name and not ROW_LM_HEAD.search(name):
            failures.append(f"{name}: its template arguments do not match ROW_LM_HEAD")
        match = FUSED_LINEAR.search(name)
        if match and got is not None:
            fused[(arch,) + match.groups()] = got
        elif "FusedLinearKernel" in name:
            failures.append(f"{name}: its template arguments do not match FUSED_LINEAR")
    in_registers = [key for key in fused if key[5] == "1"]
    if fused and not in_registers:
        failures.append("no FusedLinearKernel with its LayerNorm weights in registers")
    for key in sorted(in_registers):
        arch, dtype, rows, _, epilogue, _, cols, compiled_k = key
        # kBias, no LayerNorm, K at run time
        plain = fused.get((arch, dtype, rows, "0", "0", "0", "1", "0"))
        # Its columns' V vectors each and the LayerNorm's 2 V, where the plain kernel
        # loads its column's kChunk.
        vectors = lane_vectors(dtype, compiled_k)
        got, more = fused[key], 2 * vectors + vectors * int(cols) - CHUNK
        if plain is None:
            failures.append(f"FusedLinearKernel<{dtype}, {rows}> ({arch}): no variant without "
                            "the LayerNorm to compare with")
        elif got < plain + more:
            failures.append(f"FusedLinearKernel<{dtype}, {rows}, LayerNorm in registers, "
                            f"epilogue {epilogue}, {cols} columns a warp, K {compiled_k}> "
                            f"({arch}): {got} loads "
                            f"before the wait, {plain} without the LayerNorm (its weight and "
                            f"bias and its columns' weights are {more} more than that "
                            f"kernel's column)")
    return checked, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuobjdump", help="cuobjdump, to disassemble LIBRARY")
    parser.add_argument("--sass", nargs="*", default=[], help="cuobjdump -sass output files")
    parser.add_argument("library", nargs="?", help="a library or object with the kernels")
    args = parser.parse_args()
    texts = [open(path).read() for path in args.sass]
    if args.library:
        if not args.cuobjdump:
            parser.error("LIBRARY needs --cuobjdump")
        texts.append(subprocess.run([args.cuobjdump, "-sass", args.library], check=True,
                                    capture_output=True, text=True).stdout)
    if not texts:
        parser.error("nothing to check: give LIBRARY or --sass")
    checked, failures = 0, []
    for text in texts:
        c, f = check(text)
        checked += c
        failures += f
    for failure in failures:
        print("FAIL", failure)
    print(f"{checked} kernels checked, {len(failures)} with weight loads after the wait")
    if checked == 0:
        print("FAIL no kernel of", ", ".join(FAMILIES), "found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
