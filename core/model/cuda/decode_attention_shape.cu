// How the decode attention kernel (decode_attention_kernel.cu) is launched
// for a batch: its context splits, block size, preloading and depth, each
// chosen by measurement (see decode_kernels.h, DecodeAttentionShape).
#include <string>

#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/kernel_math.cuh"

namespace tandem {

DecodeAttentionShape DecodeAttentionShapeFor(int batch, int heads, int max_context) {
  // The context split over a cluster of 2, 4 or 8 blocks while heads x batch
  // blocks alone would leave multiprocessors idle (by batch size only, so a
  // bucket's padded rows split alike). Against the two-pass kernel this one
  // replaced (a block per head: scores into shared memory, then the values):
  // Llama-3.2-1B N=1 (32 heads: 4 splits) 859.6 -> 849.0 us per step (1
  // split 853.3, 2 853.4, 8 862.7); GPT-2 small N=64 673 -> 605 us, N=256
  // 1,288 -> 1,156 (docs/results/bench/2026-11-30-h200-one-pass-attention/).
  const int sms = kernel::MultiprocessorCount();
  DecodeAttentionShape shape;
  while (shape.splits < 8 && heads * batch * shape.splits * 2 <= sms) shape.splits *= 2;
  // A row uses as many of its cluster's blocks as give each at most 128
  // positions (one block up to 128, all 8 past 512): the merge through the
  // cluster costs more than a short context's split saves. GPT-2 small bf16
  // N=1, in one build and call (docs/results/bench/2026-12-03-h200-n1-split/
  // callB-split-tests-ab/), 8 splits -> 128 positions: prompt 64 (contexts
  // 64-320) 218.5 / 228.0 -> 213.1 / 212.8 us per step (one split always
  // 211.9 / 211.9, 64 positions 216, 256 positions 213 / 227); prompt 700
  // (contexts 700-956) 220.9 / 220.0 -> 220.0 / 220.1 (one split always 246 /
  // 293, 256 positions 230); N=2 unchanged.
  shape.split_positions = 128;
  const int blocks = heads * batch * shape.splits;
  // 256 threads a block (64 registers: 4 blocks per multiprocessor), or 128
  // where that would take more than one wave of blocks and 128 fit in one:
  // GPT-2 small N=64 (768 blocks) 592 -> 571 us per step; at N=256 (3,072
  // blocks) 256 threads stay faster (1,131 vs 1,164 us).
  shape.threads = blocks > 4 * sms && blocks <= 8 * sms ? 128 : 256;
  // The first pass's K/V in registers before the wait (86-88 registers a
  // thread instead of 64) where the grid is one wave at most, a
  // latency-bound kernel; larger grids keep their occupancy. Llama-3.2-1B
  // N=1: 836.7 / 837.8 -> 829.5 / 830.2 us per step; GPT-2 small N=1 (8
  // splits of a short context) unchanged, 293.0 / 292.0 -> 292.3 / 292.4
  // (docs/results/bench/2026-12-01-h200-n1-kernels/).
  shape.preload = blocks <= sms;
  // Where the batch's heads number an eighth of the multiprocessors or fewer
  // (8 splits: GPT-2 small and medium at one row), 512-thread blocks, whose
  // preloaded first chunk holds 256 positions, at most 4 splits of up to 256
  // positions each: contexts up to 256 take one block and no cluster merge,
  // and up to 1,024 one preloaded chunk a block. GPT-2 small bf16 N=1, in one
  // call (docs/results/bench/2026-12-04-h200-stats-latency/call5-tree-cap/):
  // prompt 64 (contexts 64-320) 150.8 / 150.9 us per step against 157.5 for
  // the previous build (256-thread blocks, 8 splits of 128); prompt 700
  // (contexts 700-956) 161.5 / 162.2 against 162.1. At most 2 splits was 0.4
  // us faster at prompt 64 but 174.8 at prompt 700 (a second chunk after the
  // wait); clusters of 8 such blocks were slower at prompt 64 (158.4 against
  // 149.6 at 2, call 3), most likely as their 96 blocks of 512 threads wait
  // for room beside the projection's (not profiled).
  if (shape.preload && shape.splits == 8) {
    shape.threads = 512;
    shape.splits = 4;
    shape.split_positions = 256;
  }
  // No more splits than a slot's longest context can use (max_context: its
  // positions): the cluster's blocks past them would only start and exit. At
  // the issue-15 bench's 321 positions (prompt 64 + 256 new tokens), GPT-2's
  // one-row clusters hold 2 blocks instead of 4 (at its default 1,024, 4):
  // N=1 150.2 / 150.4 / 150.7 -> 150.1 / 149.8 / 150.0 us per step in one
  // build, prompt 700 (957 positions, 4 either way) 161.1-161.2 both
  // (docs/results/bench/2026-12-04-h200-context-cap/). After the block size
  // and preload are chosen from the uncapped grid: only preloaded shapes
  // split (their grid is one wave), and they ignore the depth below.
  while (shape.splits > 1 && (shape.splits / 2) * shape.split_positions >= max_context) {
    shape.splits /= 2;
  }
  // Without preload, how deep a thread's chunk and how many blocks a
  // multiprocessor keeps (the register cap), by the grid: GPT-2 small bf16,
  // double-buffered + graphs, in one call against (4, 4) at every size
  // (docs/results/bench/2026-12-02-h200-attention-chunks/call3-depth-ab/):
  // a wave at 256 threads (N=64's 32-row halves: 384 blocks) (4, 3), 551.5 ->
  // 540.6 us; 128-thread blocks (N=128's 64-row halves: 768) (6, 2), 756.0 ->
  // 737.3; more than that (N=256: 3,072) (3, 4), 1,056.0 -> 1,052.2.
  if (shape.preload) {
    // (4, 1) whatever the fields say.
  } else if (shape.threads == 128) {
    shape.ahead = 6;
    shape.blocks = 2;
  } else if (blocks <= 4 * sms) {
    shape.blocks = 3;
  } else if (blocks > 8 * sms) {
    shape.ahead = 3;
  }
  return shape;
}

std::string DecodeAttentionShapeName(const DecodeAttentionShape& shape) {
  std::string name =
      "block " + std::to_string(shape.threads) + " split " + std::to_string(shape.splits);
  if (shape.split_positions > 0) name += " within " + std::to_string(shape.split_positions);
  if (shape.preload) return name + " preload";
  if (shape.ahead == 4 && shape.blocks == 4) return name;
  return name + " ahead " + std::to_string(shape.ahead) + " x" + std::to_string(shape.blocks);
}

}  // namespace tandem
