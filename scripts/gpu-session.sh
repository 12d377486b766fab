#!/usr/bin/env bash
# One device call that builds Tandem against the GPU machine's CUDA LibTorch
# and runs the named steps, writing logs under $OUT and printing short
# summaries (see ../shared/device/README.md for the machine). Prepare the
# package bundle here with `../shared/device/fetch-debs.sh && scripts/device-debs.sh`,
# then run through the device tool with carry [".device", "third_party"] (when the
# tree with them is over the tool's 64 MiB: `tar -cJf .tp/third_party.tar.xz third_party`,
# /.tp/ in .git/info/exclude, carry [".device", ".tp"] and unpack it first):
#
#   bash scripts/gpu-session.sh test bench
#
# Exit status: 2 for an unknown step (before building), 1 when the build fails or a
# test program (ctest, the parity and tokenizer scripts) exits non-zero or a step's server
# never answers, else 0.
#
# Steps:
#   test       ctest -L gpu (every GPU test; TEST_TIMEOUT seconds each, default 300)
#   bench      tandem-bench, GPT-2 small bf16, N = 1 and 64 (BENCH_BATCHES=1,64,256 for more),
#              sync vs double-buffered graphs, each row in a process of its own
#              (BENCH_ONE_PROCESS=1: all in one)
#   benchfull  tandem-bench, every mode and N = 1, 16, 64, 256 (naive_dynamic up to 64),
#              plus medium/large/xl at N = 1, 64
#   hf         transformers generate() on the bench's GPT-2 small checkpoint, N = 1, 64 (run bench first)
#   idle       GPU idle from the server's /metrics: 16 streams x 256 tokens and 1 x 512
#              (SERVER_CPUS / CLIENT_CPUS: taskset lists for the server and the clients)
#   parity     tests/parity/hf_parity.py (every size and dtype against transformers;
#              PARITY_SIZES=gpt2 for the small one only)
#   tokenizer  tests/parity/hf_tokenizer.py (the corpus against GPT2TokenizerFast)
#   profile    Nsight Compute kernel times of one steady GPT-2 small decode step, N = 1 and 64
#              (PROFILE_BATCHES="1 64 256" for others)
#   mixedprofile  kernel times of one mixed step (64 decode rows + a 16- or 256-token prompt,
#              tandem-bench --mixed, one forward) and of the decode-only step before it
#   loadgen    tandem-loadgen through gRPC against tandem-server (GPT-2 small bf16, 64 slots):
#              64 x (128 prompt, 256 output) at once, 1 x 128, and Poisson arrivals
#   mixed      tandem-bench --mixed: what prefilling one prompt adds to a step decoding
#              8 or 64 rows, mixed steps in one forward and separate
#              (MIXED_SPECS, MIXED_FORWARDS="true false": which)
#   prevmixed  the mixed step's one-forward rows on the previous build (.prev/)
#   prefill    tandem-bench --prefill: bursts of K prompts x L tokens submitted together
#              (TTFT, the packed forward's GPU time, tokens/s, TFLOP/s), and decode-bench
#              TTFT with 128-token prompts at N = 1, 16, 64
#   prevprefill  the decode-bench TTFT rows of `prefill` on the previous build (.prev/)
#   itl        scripts/bench/poisson_itl.sh: Poisson ITL with every token's time, at
#              --prefill_stall_ratio ITL_RATIOS (default "0.25"), through gRPC and the
#              OpenAI HTTP API (ITL_APIS, default "grpc completions")
#   stall      scripts/bench/long_prompt_stall.sh on GPT-2 small: a 1000-token prompt
#              arriving while 7 streams decode (their longest gap vs their median)
#   openai     tandem-loadgen through gRPC, /v1/chat/completions and /v1/completions:
#              after an unrecorded 64 x 16-token warm-up each,
#              64 x (128 prompt, 256 output) at once and 1 at a time, then tandem-bench
#              at N = 64 with the same lengths (the in-process reference)
#   llama      Llama / Qwen2 / Qwen3 parity against transformers (tiny and real
#              shapes), tandem-bench and transformers' generate at Llama-3.2-1B
#   llamabench tandem-bench alone at the Llama-3.2-1B shape (N = 1, 64)
#   llamahf    transformers' generate on llamabench's checkpoint (N = 1, 64; run llamabench first)
#   llamaprofile  per-kernel times (Nsight Compute) of a Llama-3.2-1B decode step
#   prefillprofile  per-kernel times of the smallest prefill step (GPT-2 small)
#   attnbench  tandem-attention-bench: the decode attention kernel's launch shapes at GPT-2
#              small's attention (batches 64-256, contexts 164-1000), and the read
#              ceilings of its access pattern (the same slices without math; contiguous)
#   attnncu    Nsight Compute's occupancy, warp-state, scheduler and memory sections for the
#              decode attention kernel and the read-only kernel at ATTNNCU_CASE (default
#              256x164: batch x context) in tandem-attention-bench
#   attnsass   the decode attention kernel's SASS with executed counts per instruction and its
#              instruction mix (Nsight Compute) at ATTNNCU_CASE
#   chainbench  tandem-chain-bench: the floor of a chain of 65 kernels that do no work (the
#              programmatic-launch handshake only, or a fixed 2 us spin), with and without
#              programmatic dependent launch, at several grid shapes
#   gemvbench  tandem-gemv-bench: the small-batch projections at the Llama-3.2-1B shape,
#              fused linear + RMSNorm/SwiGLU kernels vs LaunchGemv at several grid sizes; one row
#   linearbench  tandem-linear-bench: GPT-2 small's four projections at 16-256 rows, cuBLASLt's
#              first heuristic choice (what at::addmm runs) vs every algorithm it offers, the
#              skinny kernel and the cluster kernel (with and without the LayerNorm)
#   linearsurvey  tandem-linear-bench with LINEAR_BENCH_SURVEY=1: every cuBLASLt algorithm and tile
#              for GPT-2 small's four projections at SURVEY_ROWS (32,64,128,256), timed, and
#              whether cuBLAS launches it with programmatic dependent launch (its graph edges);
#              LINEAR_BENCH_SHAPES=head (or qkv,out,fc,proj,head) picks shapes, head the LM head
#   linearncu  Nsight Compute's occupancy, warp-state, scheduler, memory and source sections
#              for each cluster-kernel projection of tandem-linear-bench at LINEARNCU_ROWS (64);
#              LINEARNCU_KERNELS (a regex, default ClusterLinear) picks other kernels, e.g.
#              'SkinnyLinear|nvjet|splitK' for the skinny kernel and cuBLAS's first choice
#   prevbench  the bench step on the previous build: the tree in .prev/ (made here with
#              `git archive REV | tar -x -C .prev`, carried), built in build-prev
#   prevllama  the llamabench step on the previous build
#   ab         N=1 steps (AB_BATCHES for others; Llama-3.2-1B, GPT-2 small) under each TANDEM_EXPERIMENT value in
#              AB_VARIANTS, alternating AB_ROUNDS times: the A/B of a temporary switch a session
#              adds to the sources (none is committed; "none" is the tree as it is)
#   prevab     the ab step's runs alternating between this tree and the previous build
#              (.prev/, as prevbench), AB_ROUNDS times
set -uo pipefail
# Every step name is checked before the build (the names are the case labels below).
known=$(sed -n 's/^    \([a-z0-9_|-]*\))$/\1/p' "$0" | tr '|' ' ' | tr '\n' ' ')
for step in "$@"; do
  case " $known" in *" $step "*) ;; *) echo "unknown step $step; the steps: $known"; exit 2 ;; esac
done
: "${OUT:=/tmp/tandem-gpu-session}"
mkdir -p "$OUT"
rc=0  # 1 once a test program (ctest, the parity and tokenizer scripts) exited non-zero, or a server never answered
source .device/prelude.sh
cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > "$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }
# BUILD_TARGET: build only that target (a bench step alone needs one binary).
cmake --build build-gpu -j16 ${BUILD_TARGET:+--target "$BUILD_TARGET"} > "$OUT/build.log" 2>&1 || { grep -A8 -m5 'error' "$OUT/build.log"; exit 1; }
echo "== build ok"
bin=build-gpu/bin
table() { grep -v "^[IWE]20" "$1" | grep -E "^(model|gpt2|llama|qwen)" | awk '!/^model/ || !seen++'; }
# tandem-bench $1 at BENCH_BATCHES (default 1,64), sync and double-buffered graphs, appending
# its JSON lines to $2 and its output to $3: each (mode, N) in a process of its own, as a
# server runs one engine. A second engine in one process ran N=1 0.7-1.8 us a step slower,
# for a reason not found (docs/results/bench/2026-12-04-h200-context-cap/call3-bench-order/).
# BENCH_ONE_PROCESS=1: every row in one process, as before 2026-12-04.
bench_rows() {
  if [ "${BENCH_ONE_PROCESS:-0}" = 1 ]; then
    "$1" --batch="${BENCH_BATCHES:-1,64}" --modes=sync_graphs,double_buffered_graphs \
        --out="$2" >> "$3" 2>&1
    return
  fi
  local mode n batches
  IFS=, read -ra batches <<< "${BENCH_BATCHES:-1,64}"
  for mode in sync_graphs double_buffered_graphs; do
    for n in "${batches[@]}"; do
      "$1" --batch="$n" --modes="$mode" --out="$2" >> "$3" 2>&1
    done
  done
}
# One round of the ab steps: tandem-bench $2 at AB_BATCHES (default 1), double-buffered +
# graphs, for each arch in AB_ARCHES (default "llama gpt2") with TANDEM_EXPERIMENT=$3, each
# run a process of its own; JSON lines to $OUT/ab-$1.jsonl, rows printed as "$1 $4: ...".
ab_rows() {
  local arch size
  for arch in ${AB_ARCHES:-llama gpt2}; do
    size=$([ "$arch" = llama ] && echo llama-3.2-1b || echo gpt2)
    TANDEM_EXPERIMENT=$3 "$2" --arch=$arch --size=$size --batch=${AB_BATCHES:-1} \
        --modes=double_buffered_graphs ${AB_FLAGS:-} --out="$OUT/ab-$1.jsonl" > "$OUT/ab.log" 2>&1
    table "$OUT/ab.log" | grep -v "^model" | sed "s/^/$1 $4: /"
  done
}
# transformers' generate on tandem-bench's checkpoint $1 (N = 1, 64), raw output in
# $OUT/$2.txt and $OUT/$2.jsonl; prints the last $3 lines of its table.
hf_generate() {
  python3 scripts/bench/hf_generate.py --model "$1" --batch 1,64 \
      --out "$OUT/$2.jsonl" > "$OUT/$2.txt" 2>&1
  grep -vE "^(W|I)[0-9]|Warning|warn" "$OUT/$2.txt" | tail -"$3"
}
# Starts tandem-server (GPU defaults; gRPC 50161, HTTP 9661) logging to $1,
# its pid in $server, and waits until it answers.
start_server() {
  # shellcheck disable=SC2086  # SERVER_FLAGS: extra tandem-server flags, split on spaces
  $bin/tandem-server --listen=127.0.0.1:50161 --metrics_listen=127.0.0.1:9661 ${SERVER_FLAGS:-} \
      > "$1" 2>&1 &
  server=$!
  for _ in $(seq 1 240); do
    $bin/tandem-cli info --server=127.0.0.1:50161 --timeout=1s >/dev/null 2>&1 && return 0
    kill -0 $server 2>/dev/null || { echo "tandem-server exited (log: $1)"; return 1; }
    sleep 0.5
  done
  echo "tandem-server did not answer within 120 s (log: $1)"
  return 1
}
# Per-kernel GPU time of one steady decode step (the 100th of the runner's
# life: TANDEM_PROFILE_DECODE_STEP brackets it with cudaProfilerStart/Stop),
# Nsight Compute at the GPU's own clocks, caches not flushed; CSV in $1.csv,
# the table on stdout and in $1.txt. The rest: tandem-bench flags.
profile_step() {
  local out=$1; shift
  TANDEM_PROFILE_DECODE_STEP=100 ncu --profile-from-start off --graph-profiling node \
      --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      $bin/tandem-bench "$@" --modes=double_buffered_graphs --new_tokens=128 \
      > "$out.csv" 2> "$out.err"
  python3 scripts/bench/kernel_times.py "$out.csv" --last 100000 --order "$out-order.txt" \
      | cut -c1-150 > "$out.txt"
  head -30 "$out.txt"
}
# Nsight Compute on the first launch of the kernels matching $1 in
# tandem-attention-bench at ATTNNCU_CASE (batch x context, default 256x164);
# the rest: ncu's flags (sections, output).
ncu_attention() {
  local kernel=$1; shift
  ATTENTION_BENCH_CASES=${ATTNNCU_CASE:-256x164} ncu --graph-profiling node \
      -k "regex:$kernel" --launch-count 1 "$@" $bin/tandem-attention-bench
}
# Builds the previous tree (.prev/) once per machine.
build_prev() {
  [ -x build-prev/bin/tandem-bench ] && return 0
  # The tokenizers the Llama / Qwen families read from their source tree.
  [ -e .prev/third_party ] || ln -s "$PWD/third_party" .prev/third_party
  cmake -S .prev -B build-prev $DEVICE_CMAKE_ARGS -DTANDEM_BUILD_TESTS=OFF \
      -DTANDEM_GPT2_VOCAB_DIR="$PWD/third_party/gpt2" > "$OUT/cmake-prev.log" 2>&1 &&
    cmake --build build-prev -j16 --target tandem-bench > "$OUT/build-prev.log" 2>&1 ||
    { grep -A8 -m5 'error' "$OUT/build-prev.log"; return 1; }
}
for step in "$@"; do
  echo "== $step"
  case $step in
    test)
      ctest --test-dir build-gpu -L gpu --output-on-failure --timeout "${TEST_TIMEOUT:-300}" \
          > "$OUT/gpu-tests.log" 2>&1 || rc=1
      grep -E "Passed|Failed|tests passed" "$OUT/gpu-tests.log" ;;
    bench)
      : > "$OUT/bench.txt"
      bench_rows $bin/tandem-bench "$OUT/bench.jsonl" "$OUT/bench.txt"
      table "$OUT/bench.txt" ;;
    benchfull)
      $bin/tandem-bench --modes=sync_eager,sync_graphs,double_buffered_eager,double_buffered_graphs \
          --out="$OUT/bench.jsonl" > "$OUT/bench.txt" 2>&1
      table "$OUT/bench.txt"
      # The growing cache copies every slot's K/V each step: N <= 64 keeps it to minutes.
      $bin/tandem-bench --batch=1,16,64 --modes=naive_dynamic --out="$OUT/bench.jsonl" \
          > "$OUT/bench-naive.txt" 2>&1
      table "$OUT/bench-naive.txt" | grep -v "^model"
      for size in gpt2-medium gpt2-large gpt2-xl; do
        $bin/tandem-bench --size=$size --batch=1,64 --modes=sync_graphs,double_buffered_graphs \
            --out="$OUT/bench.jsonl" > "$OUT/bench-$size.txt" 2>&1
        table "$OUT/bench-$size.txt" | grep -v "^model"
      done ;;
    hf)
      hf_generate /tmp/tandem-bench-gpt2 hf 6 ;;
    idle)
      bash scripts/bench/idle_from_metrics.sh build-gpu 16 256 2>&1 | tail -2 | tee "$OUT/idle-n16.txt"
      bash scripts/bench/idle_from_metrics.sh build-gpu 1 512 2>&1 | tail -2 | tee "$OUT/idle-n1.txt" ;;
    parity)
      python3 tests/parity/hf_parity.py --bin $bin --out "$OUT/parity.json" \
          --sizes "${PARITY_SIZES:-gpt2,gpt2-medium,gpt2-large,gpt2-xl}" > "$OUT/parity.txt" 2>&1 || rc=1
      grep -E "^(size|gpt2|llama|qwen)|rror" "$OUT/parity.txt" ;;
    tokenizer)
      python3 tests/parity/hf_tokenizer.py > "$OUT/tokenizer.txt" 2>&1 || rc=1
      tail -1 "$OUT/tokenizer.txt" ;;
    profile)
      # GPT-2 small, N = 1 and 64 by default (see profile_step).
      for n in ${PROFILE_BATCHES:-1 64}; do
        echo "## N=$n"
        profile_step "$OUT/ncu-gpt2-$n" --batch=$n
      done ;;
    mixedprofile)
      # tandem-bench --mixed: 100 decode steps, then pairs (decode, decode),
      # (decode, mixed): decode step 102 is the second step of a decode-only
      # pair, 103 the first mixed step (64 decode rows + one prompt).
      for spec in 102:16 103:16 103:256; do
        step=${spec%%:*} len=${spec##*:} out="$OUT/ncu-mixed-$step-$len"
        TANDEM_PROFILE_DECODE_STEP=$step ncu --profile-from-start off --graph-profiling node \
            --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
            $bin/tandem-bench --mixed=64x$len > "$out.csv" 2> "$out.err"
        python3 scripts/bench/kernel_times.py "$out.csv" --last 100000 --order "$out-order.txt" \
            | cut -c1-150 > "$out.txt"
        echo "## step $step, prompt $len"; head -24 "$out.txt"
      done ;;
    prefillprofile)
      # Per-kernel time of the smallest prefill step (one token, GPT-2 small;
      # the start-up's fixed-cost measurement, TANDEM_PROFILE_PREFILL).
      TANDEM_PROFILE_PREFILL=1 ncu --profile-from-start off --graph-profiling node \
          --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
          $bin/tandem-bench --batch=1 --modes=double_buffered_graphs --new_tokens=4 \
          > "$OUT/ncu-prefill.csv" 2> "$OUT/ncu-prefill.err"
      python3 scripts/bench/kernel_times.py "$OUT/ncu-prefill.csv" --last 100000 \
          --order "$OUT/ncu-prefill-order.txt" | cut -c1-150 | tee "$OUT/ncu-prefill.txt" | head -30 ;;
    llamabench)
      $bin/tandem-bench --arch=llama --size=llama-3.2-1b --batch=1,64 \
          --modes=double_buffered_graphs --out="$OUT/bench-llama.jsonl" \
          > "$OUT/bench-llama.txt" 2>&1
      table "$OUT/bench-llama.txt" ;;
    llamahf)
      hf_generate /tmp/tandem-bench-llama-llama-3.2-1b hf-llama 5 ;;
    attnbench)
      $bin/tandem-attention-bench "$OUT/attention-bench.jsonl" 2>&1 | tee "$OUT/attention-bench.txt" ;;
    attnncu)
      # The first launch of each kernel at that case (the bench's first shape is the default).
      for kernel in SplitDecodeAttention ReadSlices; do
        ncu_attention "$kernel" --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
            > "$OUT/ncu-attention-$kernel.txt" 2>&1
        grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|\
Issued Warp|No Eligible|Eligible Warps|Active Warps|Warp Cycles Per Issued|Block Limit" \
            "$OUT/ncu-attention-$kernel.txt"
      done ;;
    attnsass)
      # The attention kernel's SASS at ATTNNCU_CASE with each instruction's executed and
      # issued counts (Nsight Compute's source page) and the instruction mix.
      ncu_attention SplitDecodeAttention --section InstructionStats --section SourceCounters \
          -f -o "$OUT/attn-sass" > "$OUT/attn-sass.log" 2>&1
      ncu --import "$OUT/attn-sass.ncu-rep" --page source --csv --print-source sass \
          > "$OUT/attn-sass.csv" 2>&1
      ncu --import "$OUT/attn-sass.ncu-rep" --page details --print-details all \
          > "$OUT/attn-sass-details.txt" 2>&1
      grep -E "Executed Instructions|Issued Instructions" "$OUT/attn-sass-details.txt" ;;
    chainbench)
      $bin/tandem-chain-bench "$OUT/chain-bench.jsonl" 2>&1 | tee "$OUT/chain-bench.txt" ;;
    gemvbench)
      $bin/tandem-gemv-bench "$OUT/gemv-bench.jsonl" 2>&1 | tee "$OUT/gemv-bench.txt" ;;
    linearbench)
      $bin/tandem-linear-bench "$OUT/linear-bench.jsonl" 2>&1 | tee "$OUT/linear-bench.txt" ;;
    linearsurvey)
      LINEAR_BENCH_SURVEY=1 LINEAR_BENCH_ROWS=${SURVEY_ROWS:-32,64,128,256} \
          $bin/tandem-linear-bench "$OUT/linear-survey.jsonl" > "$OUT/linear-survey.txt" 2>&1
      grep "^##" "$OUT/linear-survey.txt" | cut -c1-240
      # The kernels cuBLAS launched programmatically (every edge into them).
      awk '$1 != "##" && $1 != "shape" { split($6, e, "/"); if (e[1] > 0 && e[1] == e[2]) print $7 }' \
          "$OUT/linear-survey.txt" | sort | uniq -c | sort -rn | head -20 ;;
    linearncu)
      # Each kernel of tandem-linear-bench matching LINEARNCU_KERNELS (default: the cluster
      # kernel's plain Q/K/V, out, fc, proj, then Q/K/V and fc with the LayerNorm) launched
      # once at LINEARNCU_ROWS rows (default 64).
      LINEAR_BENCH_ONCE=1 LINEAR_BENCH_ROWS=${LINEARNCU_ROWS:-64} \
          ncu -k "regex:${LINEARNCU_KERNELS:-ClusterLinear}" \
          --section SpeedOfLight --section Occupancy --section LaunchStats \
          --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
          --section SourceCounters $bin/tandem-linear-bench > "$OUT/ncu-linear.txt" 2>&1
      grep -E "${LINEARNCU_KERNELS:-ClusterLinear}|Duration|SM Active Cycles|Elapsed Cycles|\
Registers Per|Achieved Occupancy|Theoretical Occ|DRAM Throughput|Issued Warp|No Eligible|\
Warp Cycles Per Issued|Block Limit|Grid Size|Block Size|Stall|stall" \
          "$OUT/ncu-linear.txt" | cut -c1-160 | head -${LINEARNCU_LINES:-150} ;;
    llamaprofile)
      # Llama-3.2-1B shape (bf16), N = 1 and 64.
      for n in 1 64; do
        echo "## N=$n"
        profile_step "$OUT/ncu-llama-$n" --arch=llama --size=llama-3.2-1b --batch=$n
      done ;;
    loadgen)
      start_server "$OUT/loadgen-server.log" || { rc=1; kill $server 2>/dev/null; continue; }
      lg="$bin/tandem-loadgen --server=127.0.0.1:50161 --progress_seconds=0"
      {
        echo "## 64 at once: 128 prompt, 256 output"
        $lg --num_requests=64 --concurrency=64 --prompt_tokens=128 --output_tokens=256 --out="$OUT/loadgen-64.jsonl"
        echo "## 1 at a time: 128 prompt, 256 output"
        $lg --num_requests=16 --concurrency=1 --prompt_tokens=128 --output_tokens=256
        echo "## unseen lengths, 1 at a time: uniform 20..300 prompt, 16 output"
        $lg --num_requests=20 --concurrency=1 --prompt_tokens=uniform:20:300 --output_tokens=16
        echo "## saturation: 64 in flight, 256 prompt, 256 output"
        $lg --num_requests=256 --concurrency=64 --prompt_tokens=256 --output_tokens=256 \
            --out="$OUT/loadgen-saturation.jsonl"
        rate=$(python3 -c "import json,sys; s=[json.loads(l) for l in open(sys.argv[1])][-1]; print(round(0.8*s['requests_per_s'],1))" "$OUT/loadgen-saturation.jsonl")
        echo "## Poisson at 80% of saturation ($rate req/s): 256 prompt, 256 output"
        $lg --num_requests=600 --request_rate=$rate --prompt_tokens=256 --output_tokens=256 \
            --out="$OUT/loadgen-poisson.jsonl"
      } > "$OUT/loadgen.txt" 2>&1
      # The server's view of the whole run (step phases, prefill budget).
      python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:9661/metrics').read().decode())" \
          > "$OUT/loadgen-metrics.txt" || true
      kill $server; wait $server
      grep -E "^##|^requests|^TTFT|^TPOT|^ITL" "$OUT/loadgen.txt" ;;
    prefill)
      $bin/tandem-bench --prefill=1x128,16x128,64x128,64x512,8x1000,16x1000 \
          --out="$OUT/prefill.jsonl" > "$OUT/prefill.txt" 2>&1
      table "$OUT/prefill.txt"
      $bin/tandem-bench --prompt_tokens=128 --new_tokens=16 --batch=1,16,64 \
          --modes=double_buffered_graphs --out="$OUT/prefill.jsonl" > "$OUT/prefill-ttft.txt" 2>&1
      table "$OUT/prefill-ttft.txt" ;;
    mixed)
      # What prefilling a prompt adds to a decode step, one forward vs separate.
      for fused in ${MIXED_FORWARDS:-true false}; do
        $bin/tandem-bench --mixed=${MIXED_SPECS:-8x16,8x256,8x1000,64x16,64x64,64x256,64x1000} \
            --one_forward_mixed_steps=$fused --out="$OUT/mixed.jsonl"
      done > "$OUT/mixed.txt" 2>&1
      grep -v "^[IW]2" "$OUT/mixed.txt" ;;
    prevmixed)
      build_prev || continue
      build-prev/bin/tandem-bench --mixed=${MIXED_SPECS:-8x16,8x256,8x1000,64x16,64x64,64x256,64x1000} \
          --out="$OUT/mixed-prev.jsonl" > "$OUT/mixed-prev.txt" 2>&1
      grep -v "^[IW]2" "$OUT/mixed-prev.txt" ;;
    stall)
      STALL_DELAY=0.15 STREAM_TOKENS=1000 LONG_PROMPT=1000 \
          bash scripts/bench/long_prompt_stall.sh build-gpu "$OUT/stall" | tee "$OUT/stall.txt"
      STALL_DELAY=0.15 STREAM_TOKENS=1000 LONG_PROMPT=1000 STALL_PORT=50172 \
          bash scripts/bench/long_prompt_stall.sh build-gpu "$OUT/stall-prev" \
          --prefill_tokens_while_decoding=100000 | sed 's/^/unchunked: /' | tee -a "$OUT/stall.txt" ;;
    itl)
      # Through gRPC, then the OpenAI HTTP API (ITL_APIS; file tags -grpc, -completions).
      for api in ${ITL_APIS:-grpc completions}; do
        # shellcheck disable=SC2086  # ITL_RATIOS: space-separated
        LOADGEN_API=$([ "$api" = grpc ] || echo "$api") ITL_TAG=-$api \
            bash scripts/bench/poisson_itl.sh build-gpu ${ITL_RATIOS:-0.25}
      done | tee "$OUT/itl.txt" ;;
    prevprefill)
      build_prev || continue
      build-prev/bin/tandem-bench --prompt_tokens=128 --new_tokens=16 --batch=1,16,64 \
          --modes=double_buffered_graphs --out="$OUT/prefill-prev.jsonl" \
          > "$OUT/prefill-ttft-prev.txt" 2>&1
      table "$OUT/prefill-ttft-prev.txt" ;;
    openai)
      start_server "$OUT/openai-server.log" || { rc=1; kill $server 2>/dev/null; continue; }
      lg="$bin/tandem-loadgen --server=127.0.0.1:50161 --http=127.0.0.1:9661 --progress_seconds=0"
      {
        for api in grpc chat completions; do
          # Unrecorded warm-up: each API's first 64 connections and streams
          # after the server starts (tandem-bench's own warm-up is in-process).
          $lg --api=$api --num_requests=64 --concurrency=64 --prompt_tokens=128 --output_tokens=16 \
              > /dev/null 2>&1
          echo "## $api: 64 at once, 128 prompt, 256 output"
          $lg --api=$api --num_requests=64 --concurrency=64 --prompt_tokens=128 --output_tokens=256 \
              --out="$OUT/openai-$api-64.jsonl"
          echo "## $api: 1 at a time, 128 prompt, 256 output"
          $lg --api=$api --num_requests=16 --concurrency=1 --prompt_tokens=128 --output_tokens=256 \
              --out="$OUT/openai-$api-1.jsonl"
        done
      } > "$OUT/openai.txt" 2>&1
      kill $server; wait $server
      # The in-process reference at the same N and lengths: chat prompts are
      # longer (random ids re-tokenized as text, plus the template): the mean
      # prompt length the chat run reported.
      chat_prompt=$(python3 -c "import json; rows = [json.loads(l) for l in open('$OUT/openai-chat-64.jsonl') if 'summary' not in l]; print(round(sum(r['prompt_tokens'] for r in rows) / len(rows)))")
      for prompt in 128 $chat_prompt; do
        $bin/tandem-bench --batch=64 --prompt_tokens=$prompt --new_tokens=256 \
            --modes=double_buffered_graphs --out="$OUT/openai-bench.jsonl" >> "$OUT/openai.txt" 2>&1
      done
      grep -E "^##|^requests|^TTFT|^ITL|^gpt2" "$OUT/openai.txt" ;;
    llama)
      # Llama / Qwen2 / Qwen3 against transformers at a tiny shape and the
      # Llama-3.2-1B, Qwen2.5-0.5B and Qwen3-0.6B shapes, then the 1B benchmark
      # with transformers' generate in the same run.
      python3 tests/parity/hf_parity.py --bin $bin --out "$OUT/parity-llama.json" \
          --sizes "${LLAMA_SIZES:-llama:tiny,qwen2:tiny,qwen3:tiny,llama:llama-3.2-1b,qwen2:qwen2.5-0.5b,qwen3:qwen3-0.6b}" \
          > "$OUT/parity-llama.txt" 2>&1 || rc=1
      grep -E "^(size|llama|qwen)|rror" "$OUT/parity-llama.txt"
      $bin/tandem-bench --arch=llama --size=llama-3.2-1b --batch=1,64 \
          --modes=sync_graphs,double_buffered_graphs --out="$OUT/bench-llama.jsonl" \
          > "$OUT/bench-llama.txt" 2>&1
      table "$OUT/bench-llama.txt"
      hf_generate /tmp/tandem-bench-llama-llama-3.2-1b hf-llama 5 ;;
    prevbench)
      build_prev || continue
      bench_rows build-prev/bin/tandem-bench "$OUT/bench-prev.jsonl" "$OUT/bench-prev.txt"
      table "$OUT/bench-prev.txt" ;;
    prevllama)
      build_prev || continue
      build-prev/bin/tandem-bench --arch=llama --size=llama-3.2-1b --batch=1,64 \
          --modes=double_buffered_graphs --out="$OUT/bench-llama-prev.jsonl" \
          >> "$OUT/bench-llama-prev.txt" 2>&1
      table "$OUT/bench-llama-prev.txt" ;;
    ab)
      # AB_VARIANTS (default "none"), AB_ARCHES ("llama gpt2"), AB_ROUNDS (3),
      # AB_FLAGS (more tandem-bench flags, e.g. --prompt_tokens=700).
      for round in $(seq 1 "${AB_ROUNDS:-3}"); do
        for e in ${AB_VARIANTS:-none}; do ab_rows "$e" $bin/tandem-bench "$e" "$round"; done
      done ;;
    prevab)
      # The ab step between this tree and the previous build, alternating.
      build_prev || continue
      for round in $(seq 1 "${AB_ROUNDS:-3}"); do
        for b in build-gpu build-prev; do ab_rows "$b" $b/bin/tandem-bench none "$round"; done
      done ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
exit $rc
