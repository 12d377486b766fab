// GPU tests of GPT-2 on the CUDA runner: every engine mode against
// synchronous eager (waves, all at once, two halves on two streams, wide
// batches), chunked prompts against each request alone, slot reuse, the
// packed-prefill kernel and the mixed step (decode rows and a pack in one
// forward) against the reference, and the steady decode loop running
// without a host synchronization.
#include <cstdint>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/engine/generation_request.h"
#include "core/engine/model_runner.h"
#include "core/engine/step_plan.h"
#include "core/model/causal_lm.h"
#include "core/model/cuda/gpt2_fused_decoder.h"
#include "core/model/gpt2/gpt2_config.h"
#include "core/model/gpt2/gpt2_family.h"
#include "core/model/gpt2/gpt2_model.h"
#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/kv_cache.h"
#include "core/model/model_loader.h"
#include "core/model/model_options.h"
#include "core/model/prefill_pack.h"
#include "tests/core/temp_dir.h"
#include "tests/gpu/gpu_test_support.h"

namespace tandem {
namespace {

using gpu_test::Ids;
using gpu_test::MixedRequests;
using gpu_test::PrefillBoth;
using gpu_test::RelativeError;
using gpu_test::RunAll;
using gpu_test::Shape;
using gpu_test::SmallConfig;

// A random float32 checkpoint of `config` in a temporary directory.
class CheckpointDir : public TempDir {
 public:
  explicit CheckpointDir(const Gpt2Config& config) : TempDir("tandem_gpu_") {
    EXPECT_TRUE(WriteRandomGpt2Checkpoint(path(), config, 5, at::kFloat).ok());
  }
};

TEST(EngineModesTest, EveryModeGivesTheTokensOfSynchronousEager) {
  CheckpointDir dir(SmallConfig());
  const std::vector<GenerationRequest> requests = MixedRequests();
  const auto reference = RunAll(dir.path(), false, false, 8, requests);
  ASSERT_EQ(reference.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_FALSE(reference[i].empty());
    EXPECT_LE(reference[i].size(), static_cast<size_t>(requests[i].stopping.max_tokens));
  }
  for (auto [pipelined, graphs] : {std::pair{false, true}, std::pair{true, false},
                                   std::pair{true, true}}) {
    const auto tokens = RunAll(dir.path(), pipelined, graphs, 8, requests);
    ASSERT_EQ(tokens.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(tokens[i], reference[i]) << "request " << i << " pipelined=" << pipelined
                                         << " graphs=" << graphs;
    }
  }
  // 12 slots, all requests at once: batches above the fused limit take the
  // cuBLAS path (bucket 12).
  const auto wide_reference = RunAll(dir.path(), false, false, 12, requests, /*waves=*/false);
  const auto wide = RunAll(dir.path(), true, true, 12, requests, /*waves=*/false);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_FALSE(wide_reference[i].empty());
    EXPECT_EQ(wide[i], wide_reference[i]) << "request " << i << " with 12 slots";
  }
}

// `slots` requests at once in as many slots: while 32 to 63 decode, GPT-2's
// steps run as two halves on two streams (Gpt2FusedDecoder::UsesHalves),
// captured in the decode graphs and in the double-buffered pipeline; every
// mode gives the tokens of synchronous eager, whose halves run eagerly (the
// same kernels in stream order, so the tokens must be identical). In fp32,
// and in bf16, where halves take the skinny kernel and one chain of 64 rows
// or more the warp-group kernel (Q/K/V at this width) and cuBLAS's nvjet
// GEMMs. nvjet never waits for its predecessor itself, so its graph edges
// must stay full dependencies: made programmatic, they let every bf16
// request's tokens differ here (docs/results/bench/2026-12-02-h200-cublas-edges/).
void ExpectBatchesGiveTheTokensOfSynchronousEager(int slots) {
  CheckpointDir dir(SmallConfig());
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < slots; ++i) {
    GenerationRequest r;
    for (int t = 0; t < 3 + (7 * i) % 40; ++t) {
      r.prompt_token_ids.push_back((89 * i + 11 * t) % 50000);
    }
    r.stopping.max_tokens = 20 + i % 7;
    r.stopping.ignore_eos = true;
    if (i % 3 == 1) {
      r.sampling.temperature = 0.8f;
      r.sampling.top_k = 40;
      r.sampling.seed = 2000 + i;
    }
    requests.push_back(r);
  }
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    const char* name = dtype == DType::kFloat32 ? "fp32" : "bf16";
    const auto reference =
        RunAll(dir.path(), false, false, slots, requests, /*waves=*/false, 0, dtype);
    ASSERT_EQ(reference.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(reference[i].size(), static_cast<size_t>(requests[i].stopping.max_tokens));
    }
    for (auto [pipelined, graphs] : {std::pair{false, true}, std::pair{true, true}}) {
      const auto tokens =
          RunAll(dir.path(), pipelined, graphs, slots, requests, /*waves=*/false, 0, dtype);
      ASSERT_EQ(tokens.size(), requests.size());
      for (size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(tokens[i], reference[i]) << name << " request " << i << " of " << slots
                                           << " pipelined=" << pipelined << " graphs=" << graphs;
      }
    }
  }
}

// Halves of up to 20 rows: the skinny kernel's in bf16.
TEST(EngineModesTest, TwoHalvesGiveTheTokensOfSynchronousEager) {
  ExpectBatchesGiveTheTokensOfSynchronousEager(40);
}

// One chain of 80 rows (the warp-group kernel and cuBLAS in bf16), then
// halves as the requests end.
TEST(EngineModesTest, WideBatchesGiveTheTokensOfSynchronousEager) {
  ExpectBatchesGiveTheTokensOfSynchronousEager(80);
}

// Packed and chunked prefill in the engine: all requests at once, prompts
// split into chunks of at most 7 tokens that share steps with decode rows,
// give every request the tokens it gets alone.
TEST(EngineModesTest, ABurstOfChunkedPromptsGivesEachRequestsTokensAlone) {
  CheckpointDir dir(SmallConfig());
  const std::vector<GenerationRequest> requests = MixedRequests();
  const auto burst = RunAll(dir.path(), true, true, 12, requests, /*waves=*/false,
                            /*prefill_budget=*/7);
  ASSERT_EQ(burst.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto alone = RunAll(dir.path(), false, false, 1, {requests[i]});
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_FALSE(alone[0].empty());
    EXPECT_EQ(burst[i], alone[0]) << "request " << i;
  }
}

// The packed-prefill attention kernel (through Gpt2FusedDecoder) against
// the reference forward run one whole prompt at a time: mixed lengths, a
// prompt's later chunk in the same pack, padding rows and segments.
TEST(PrefillKernelTest, PackedPrefillMatchesOneAtATime) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const Gpt2Weights weights = Gpt2Weights::Random(config, 21).To(dtype, at::kCUDA);
    Gpt2FusedDecoder fused(config, weights);
    Gpt2Model reference(config, weights);
    const auto options = at::TensorOptions().dtype(dtype).device(at::kCUDA);
    KvCache packed(Shape(config, 4), options), alone(Shape(config, 4), options);
    const std::vector<int64_t> lengths = {37, 130, 1, 200};
    std::vector<std::vector<int32_t>> prompts;
    for (int64_t s = 0; s < 4; ++s) {
      std::vector<int32_t> p;
      for (int64_t t = 0; t < lengths[s]; ++t) p.push_back((131 * s + 17 * t + 3) % 50000);
      prompts.push_back(p);
    }
    // Slot 1's first 50 tokens go in an earlier pack; its other 80 share
    // the pack with the three whole prompts.
    const absl::Span<const int32_t> second(prompts[1]);
    fused.PrefillPacked(MakePrefillPack({{1, 0, second.subspan(0, 50)}}, at::kCUDA), &packed);
    const PrefillPack pack = MakePrefillPack(
        {{0, 0, prompts[0]}, {1, 50, second.subspan(50)}, {2, 0, prompts[2]},
         {3, 0, prompts[3]}},
        at::kCUDA, /*padded_tokens=*/384, /*padded_segments=*/8);
    const at::Tensor logits = fused.PrefillPacked(pack, &packed);
    ASSERT_EQ(logits.size(0), 8);
    const double tolerance = dtype == at::kFloat ? 1e-5 : 3e-2;
    for (int64_t s = 0; s < 4; ++s) {
      std::vector<int64_t> ids(prompts[s].begin(), prompts[s].end());
      const at::Tensor expected = reference.Prefill(s, Ids(ids), &alone);
      EXPECT_LE(RelativeError(logits[s], expected[0]), tolerance)
          << "prompt " << s << " dtype " << c10::toString(dtype);
      if (dtype == at::kFloat) {
        EXPECT_EQ(logits[s].argmax().item<int64_t>(), expected[0].argmax().item<int64_t>());
      }
      for (int64_t layer = 0; layer < config.n_layer; ++layer) {
        EXPECT_LE(RelativeError(packed.keys(layer)[s].narrow(1, 0, lengths[s]),
                                alone.keys(layer)[s].narrow(1, 0, lengths[s])),
                  tolerance);
        EXPECT_LE(RelativeError(packed.values(layer)[s].narrow(1, 0, lengths[s]),
                                alone.values(layer)[s].narrow(1, 0, lengths[s])),
                  tolerance);
      }
    }
    // A pack of at most kMaxFusedRows rows (the LayerNorm kernel's one-block
    // path with the residual add): a 3-token prompt alone, unpadded.
    KvCache small(Shape(config, 4), options), small_alone(Shape(config, 4), options);
    const std::vector<int64_t> few = {11, 4242, 7};
    const at::Tensor got = fused.Prefill(3, Ids(few), &small, /*all_logits=*/true);
    const at::Tensor want = reference.Prefill(3, Ids(few), &small_alone, /*all_logits=*/true);
    ASSERT_EQ(got.size(0), 3);
    EXPECT_LE(RelativeError(got, want), tolerance) << c10::toString(dtype);
    for (int64_t layer = 0; layer < config.n_layer; ++layer) {
      EXPECT_LE(RelativeError(small.values(layer)[3].narrow(1, 0, 3),
                              small_alone.values(layer)[3].narrow(1, 0, 3)),
                tolerance);
    }
  }
}

// Decode rows and a pack in one forward (the runner's mixed steps) against
// the pack's PrefillPacked and the rows' DecodeSlots run one after the
// other: the pack holds a later chunk of a prompt and two whole prompts; the
// decode rows include a padding row on the scratch slot.
TEST(PrefillKernelTest, OneMixedForwardMatchesPrefillThenDecode) {
  c10::InferenceMode inference_mode;
  const Gpt2Config config = SmallConfig();
  const Gpt2Weights weights = Gpt2Weights::Random(config, 23).To(at::kFloat, at::kCUDA);
  Gpt2FusedDecoder fused(config, weights);
  ASSERT_TRUE(fused.FusesMixedSteps());
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  KvCache mixed(Shape(config, 8), options), apart(Shape(config, 8), options);
  // Slots 0-3 hold prompts of 6, 43, 80 and 117 tokens.
  std::vector<int64_t> lengths = PrefillBoth(fused, &mixed, fused, &apart, 4, 37, 5);
  const int64_t scratch = 7;
  const at::Tensor slots = Ids({0, 1, 2, scratch});
  const at::Tensor slot_tokens = Ids({11, 222, 3333, 44, 0, 0, 0, 0});
  const at::Tensor slot_positions = Ids({lengths[0], lengths[1], lengths[2], 0, 0, 0, 0, 0});
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t length : {20, 33, 64}) {
    std::vector<int32_t> p;
    for (int64_t t = 0; t < length; ++t) p.push_back((71 * length + 13 * t) % 50000);
    prompts.push_back(p);
  }
  const PrefillPack pack =
      MakePrefillPack({{3, lengths[3], prompts[0]}, {4, 0, prompts[1]}, {5, 0, prompts[2]}},
                      at::kCUDA, /*padded_tokens=*/128, /*padded_segments=*/8);
  for (bool greedy : {false, true}) {
    const CausalLm::MixedDecode got =
        fused.DecodeSlotsWithPrefill(pack, slots, slot_tokens, slot_positions, greedy, &mixed);
    const at::Tensor prefill_logits = fused.PrefillPacked(pack, &apart);
    const CausalLm::SlotDecode decode =
        fused.DecodeSlots(slots, slot_tokens, slot_positions, greedy, &apart);
    ASSERT_EQ(got.prefill.logits.size(0), 8);
    ASSERT_EQ(got.decode.logits.size(0), 4);
    for (int64_t r = 0; r < 3; ++r) {
      EXPECT_LE(RelativeError(got.prefill.logits[r], prefill_logits[r]), 1e-4) << "segment " << r;
      EXPECT_LE(RelativeError(got.decode.logits[r], decode.logits[r]), 1e-4) << "row " << r;
      EXPECT_EQ(got.decode.logits[r].argmax().item<int64_t>(),
                decode.logits[r].argmax().item<int64_t>());
    }
    if (greedy) {  // the head's greedy kernel chose the pack's tokens too
      ASSERT_TRUE(got.prefill.tokens.defined());
      EXPECT_TRUE(at::equal(got.prefill.tokens.narrow(0, 0, 3),
                            prefill_logits.narrow(0, 0, 3).argmax(-1)));
      EXPECT_TRUE(at::equal(got.decode.tokens.narrow(0, 0, 3), decode.tokens.narrow(0, 0, 3)));
      EXPECT_LE(RelativeError(got.decode.logprobs.narrow(0, 0, 3),
                              decode.logprobs.narrow(0, 0, 3)),
                1e-4);
    }
    // Every slot's K/V up to its new length: the decode rows' appended
    // position, the chunk after slot 3's earlier tokens, the new prompts.
    const std::vector<int64_t> ends = {lengths[0] + 1, lengths[1] + 1, lengths[2] + 1,
                                       lengths[3] + 20, 33, 64};
    for (int64_t layer = 0; layer < config.n_layer; ++layer) {
      for (int64_t s = 0; s < 6; ++s) {
        EXPECT_LE(RelativeError(mixed.keys(layer)[s].narrow(1, 0, ends[s]),
                                apart.keys(layer)[s].narrow(1, 0, ends[s])),
                  1e-5)
            << "slot " << s << " layer " << layer;
        EXPECT_LE(RelativeError(mixed.values(layer)[s].narrow(1, 0, ends[s]),
                                apart.values(layer)[s].narrow(1, 0, ends[s])),
                  1e-5)
            << "slot " << s << " layer " << layer;
      }
    }
  }
}

TEST(EngineModesTest, AReusedSlotNeverSeesTheOldSequence) {
  CheckpointDir dir(SmallConfig());
  std::vector<GenerationRequest> requests = MixedRequests();
  GenerationRequest long_one = requests[11];  // 58-token prompt, 38 tokens
  GenerationRequest short_one = requests[2];  // 13-token prompt
  const auto alone = RunAll(dir.path(), true, true, 1, {short_one});
  const auto after = RunAll(dir.path(), true, true, 1, {long_one, short_one});
  ASSERT_EQ(alone.size(), 1u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_FALSE(alone[0].empty());
  EXPECT_EQ(after[1], alone[0]);
}

TEST(CudaRunnerTest, SteadyDecodeNeverSynchronizes) {
  CheckpointDir dir(SmallConfig());
  ModelOptions options;
  options.model_dir = dir.path();
  options.device.kind = DeviceSpec::Kind::kCuda;
  options.max_slots = 4;
  absl::StatusOr<LoadedModel> loaded = LoadModel(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ModelRunner& runner = *loaded->runner;
  ASSERT_TRUE(runner.reads_tokens_on_device());
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
  StepPlan prefill;
  for (int slot = 0; slot < 2; ++slot) {
    PrefillItem item;
    item.slot = slot;
    item.tokens = prompt;
    prefill.prefills.push_back(item);
  }
  absl::StatusOr<StepOutput> first = runner.Step(prefill);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->prefill_tokens.size(), 2u);
  StepPlan decode;
  for (int slot = 0; slot < 2; ++slot) {
    DecodeItem item;
    item.slot = slot;
    decode.decodes.push_back(item);
  }
  // From here on any synchronizing Torch call (.item(), a pageable copy)
  // throws, and Launch reports it.
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  ASSERT_TRUE(runner.Launch(decode).ok());
  ASSERT_TRUE(runner.Launch(decode).ok());  // launched before the first is read
  absl::StatusOr<StepOutput> second = runner.Collect();
  ASSERT_TRUE(runner.Launch(decode).ok());
  absl::StatusOr<StepOutput> third = runner.Collect();
  absl::StatusOr<StepOutput> fourth = runner.Collect();
  // A mixed step: slots 0 and 1 decode while slot 2's prompt is prefilled in
  // two chunks, still without a synchronization.
  StepPlan mixed = decode;
  PrefillItem chunk;
  chunk.slot = 2;
  chunk.tokens = absl::MakeConstSpan(prompt).subspan(0, 3);
  chunk.last_chunk = false;
  mixed.prefills.push_back(chunk);
  ASSERT_TRUE(runner.Launch(mixed).ok());
  chunk.tokens = absl::MakeConstSpan(prompt).subspan(3);
  chunk.start = 3;
  chunk.last_chunk = true;
  mixed.prefills[0] = chunk;
  ASSERT_TRUE(runner.Launch(mixed).ok());
  absl::StatusOr<StepOutput> fifth = runner.Collect();
  absl::StatusOr<StepOutput> sixth = runner.Collect();
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  ASSERT_TRUE(fifth.ok()) << fifth.status();
  ASSERT_TRUE(sixth.ok()) << sixth.status();
  EXPECT_EQ(sixth->prefill_tokens.size(), 1u);
  EXPECT_EQ(sixth->decode_tokens.size(), 2u);
  // Slot 2's first token is the one slots 0 and 1 got from the same prompt.
  EXPECT_EQ(sixth->prefill_tokens[0].token, first->prefill_tokens[0].token);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(third.ok()) << third.status();
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  for (const auto* step : {&second, &third, &fourth}) {
    EXPECT_EQ((*step)->decode_tokens.size(), 2u);
  }
  EXPECT_GT(third->timings.gpu_busy_seconds, 0);
  EXPECT_GE(third->timings.gpu_idle_seconds, 0);
}

}  // namespace
}  // namespace tandem
