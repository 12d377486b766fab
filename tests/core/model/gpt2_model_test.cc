#include "core/model/gpt2/gpt2_model.h"

#include <memory>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "core/model/gpt2/gpt2_weights.h"
#include "core/model/kv_cache.h"
#include "core/model/prefill_pack.h"

namespace tandem {
namespace {


Gpt2Config TinyConfig() {
  Gpt2Config config = *Gpt2Config::Preset("tiny");
  config.vocab_size = 300;
  config.n_positions = 32;
  return config;
}

at::Tensor Ids(std::vector<int64_t> ids) { return at::tensor(ids, at::kLong); }

KvCacheShape CacheShape(const CausalLm& model, int64_t slots, int64_t context) {
  KvCacheShape shape = model.kv_shape();
  shape.num_slots = slots;
  shape.max_context = context;
  return shape;
}

class Gpt2ModelTest : public ::testing::Test {
 protected:
  Gpt2ModelTest()
      : config_(TinyConfig()),
        model_(config_, Gpt2Weights::Random(config_, 7)),
        cache_(CacheShape(model_, /*slots=*/3, config_.n_positions),
               at::TensorOptions().dtype(at::kFloat)) {}

  Gpt2Config config_;
  Gpt2Model model_;
  KvCache cache_;
  c10::InferenceMode inference_mode_;
};

TEST_F(Gpt2ModelTest, DecodingWithTheCacheMatchesRecomputingTheSequence) {
  const std::vector<int64_t> tokens = {5, 17, 250, 3, 99, 42, 7, 7, 120, 1};
  const at::Tensor full = model_.Prefill(0, Ids(tokens), &cache_, /*all_logits=*/true);
  ASSERT_EQ(full.sizes(), (std::vector<int64_t>{10, 300}));
  // Slot 1: prefill 4 tokens, then decode the rest one at a time.
  const at::Tensor prefix = model_.Prefill(
      1, Ids({tokens.begin(), tokens.begin() + 4}), &cache_);
  EXPECT_TRUE(at::allclose(prefix[0], full[3], 1e-5, 1e-4));
  for (int64_t p = 4; p < 10; ++p) {
    const at::Tensor logits =
        model_.Decode(Ids({1}), Ids({tokens[p]}), Ids({p}), p + 1, &cache_);
    EXPECT_TRUE(at::allclose(logits[0], full[p], 1e-5, 1e-4))
        << "position " << p << " max diff "
        << (logits[0] - full[p]).abs().max().item<float>();
  }
}

TEST_F(Gpt2ModelTest, BatchedDecodeOfSlotsAtDifferentLengthsMatchesSingleDecode) {
  const std::vector<int64_t> a = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> b = {9, 8};
  model_.Prefill(0, Ids(a), &cache_);
  model_.Prefill(2, Ids(b), &cache_);
  const at::Tensor batched = model_.Decode(Ids({0, 2}), Ids({11, 12}), Ids({7, 2}), 8, &cache_);
  // Recompute each sequence from scratch in slot 1.
  std::vector<int64_t> a_full = a, b_full = b;
  a_full.push_back(11);
  b_full.push_back(12);
  const at::Tensor a_ref = model_.Prefill(1, Ids(a_full), &cache_);
  const at::Tensor b_ref = model_.Prefill(1, Ids(b_full), &cache_);
  EXPECT_TRUE(at::allclose(batched[0], a_ref[0], 1e-5, 1e-4));
  EXPECT_TRUE(at::allclose(batched[1], b_ref[0], 1e-5, 1e-4));
}

TEST_F(Gpt2ModelTest, AReusedSlotNeverSeesThePreviousSequence) {
  const std::vector<int64_t> fresh = {4, 5, 6};
  const at::Tensor expected = model_.Prefill(0, Ids(fresh), &cache_);
  model_.Decode(Ids({0}), Ids({77}), Ids({3}), 4, &cache_);
  // Slot 1 first holds a long, different sequence, then the short one.
  model_.Prefill(1, Ids({200, 201, 202, 203, 204, 205, 206, 207}), &cache_);
  EXPECT_TRUE(at::allclose(model_.Prefill(1, Ids(fresh), &cache_), expected, 1e-6, 1e-5));
  const at::Tensor decoded = model_.Decode(Ids({1}), Ids({77}), Ids({3}), 8, &cache_);
  const at::Tensor reference = model_.Decode(Ids({0}), Ids({77}), Ids({3}), 4, &cache_);
  EXPECT_TRUE(at::allclose(decoded, reference, 1e-5, 1e-4));
}

TEST_F(Gpt2ModelTest, AttentionIsCausal) {
  // Changing a later token must not change earlier positions' logits.
  const at::Tensor x = model_.Prefill(0, Ids({1, 2, 3, 4}), &cache_, true);
  const at::Tensor y = model_.Prefill(0, Ids({1, 2, 3, 250}), &cache_, true);
  EXPECT_TRUE(at::allclose(x.narrow(0, 0, 3), y.narrow(0, 0, 3)));
  EXPECT_FALSE(at::allclose(x[3], y[3]));
}


// max |a - b| / max |b|: the relative error the prefill tests bound.
double RelativeError(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

std::vector<int32_t> Prompt(int length, int salt) {
  std::vector<int32_t> ids;
  for (int i = 0; i < length; ++i) ids.push_back((i * 37 + salt * 101 + 5) % 300);
  return ids;
}

at::Tensor Ids32(const std::vector<int32_t>& ids) {
  return at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong);
}

TEST_F(Gpt2ModelTest, PackedPrefillMatchesOneAtATime) {
  const KvCacheShape shape = CacheShape(model_, 4, config_.n_positions);
  const auto options = at::TensorOptions().dtype(at::kFloat);
  KvCache alone(shape, options), packed(shape, options);
  const std::vector<std::vector<int32_t>> prompts = {Prompt(7, 1), Prompt(1, 2), Prompt(13, 3),
                                                     Prompt(4, 4)};
  std::vector<PrefillSegment> segments;
  for (int s = 0; s < 4; ++s) segments.push_back({s, 0, prompts[s]});
  // Padded to 32 rows and 8 segments, as the CUDA runner pads its packs.
  const at::Tensor logits =
      model_.PrefillPacked(MakePrefillPack(segments, at::kCPU, 32, 8), &packed);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{8, 300}));
  const at::Tensor every = model_.PrefillPacked(MakePrefillPack(segments, at::kCPU), &packed,
                                                /*all_logits=*/true);
  ASSERT_EQ(every.size(0), 25);
  int64_t row = 0;
  for (int s = 0; s < 4; ++s) {
    const auto n = static_cast<int64_t>(prompts[s].size());
    const at::Tensor expected = model_.Prefill(s, Ids32(prompts[s]), &alone, true);
    EXPECT_LE(RelativeError(logits[s], expected[n - 1]), 1e-5) << "prompt " << s;
    EXPECT_LE(RelativeError(every.narrow(0, row, n), expected), 1e-5) << "prompt " << s;
    row += n;
    for (int64_t layer = 0; layer < config_.n_layer; ++layer) {
      EXPECT_LE(RelativeError(packed.keys(layer)[s].narrow(1, 0, n),
                              alone.keys(layer)[s].narrow(1, 0, n)), 1e-5);
      EXPECT_LE(RelativeError(packed.values(layer)[s].narrow(1, 0, n),
                              alone.values(layer)[s].narrow(1, 0, n)), 1e-5);
    }
  }
}

TEST_F(Gpt2ModelTest, AChunkedPromptGivesTheSameKvAndFirstTokenAsAWholeOne) {
  const std::vector<int32_t> prompt = Prompt(20, 9), other = Prompt(5, 10);
  const absl::Span<const int32_t> p(prompt);
  const at::Tensor whole = model_.Prefill(0, Ids32(prompt), &cache_);
  // Slot 1 in three chunks; the second shares its pack with another prompt
  // (slot 2), as in a mixed step.
  model_.PrefillPacked(MakePrefillPack({{1, 0, p.subspan(0, 7)}}, at::kCPU), &cache_);
  model_.PrefillPacked(
      MakePrefillPack({{2, 0, other}, {1, 7, p.subspan(7, 1)}}, at::kCPU), &cache_);
  const at::Tensor last =
      model_.PrefillPacked(MakePrefillPack({{1, 8, p.subspan(8)}}, at::kCPU), &cache_);
  EXPECT_LE(RelativeError(last[0], whole[0]), 1e-5);
  EXPECT_EQ(last[0].argmax().item<int64_t>(), whole[0].argmax().item<int64_t>());
  for (int64_t layer = 0; layer < config_.n_layer; ++layer) {
    EXPECT_LE(RelativeError(cache_.keys(layer)[1].narrow(1, 0, 20),
                            cache_.keys(layer)[0].narrow(1, 0, 20)), 1e-5);
    EXPECT_LE(RelativeError(cache_.values(layer)[1].narrow(1, 0, 20),
                            cache_.values(layer)[0].narrow(1, 0, 20)), 1e-5);
  }
  // The other prompt of the mixed pack is unaffected by the chunk beside it.
  const at::Tensor other_alone = model_.Prefill(0, Ids32(other), &cache_);
  const at::Tensor other_mixed = model_.PrefillPacked(
      MakePrefillPack({{2, 0, other}, {1, 7, p.subspan(7, 1)}}, at::kCPU), &cache_);
  EXPECT_LE(RelativeError(other_mixed[0], other_alone[0]), 1e-5);
}

// A mixed step as one forward (the eager runner's): a pack of a prompt's
// later chunk and a new prompt, padded, beside two decoding slots, gives
// the logits and K/V of PrefillPacked then Decode.
TEST_F(Gpt2ModelTest, PrefillAndDecodeInOneForwardMatchesTheTwoApart) {
  const KvCacheShape shape = CacheShape(model_, 4, config_.n_positions);
  const auto options = at::TensorOptions().dtype(at::kFloat);
  KvCache apart(shape, options), together(shape, options);
  const std::vector<int32_t> chunked = Prompt(12, 5), fresh = Prompt(6, 6);
  const absl::Span<const int32_t> c(chunked);
  for (KvCache* cache : {&apart, &together}) {
    model_.Prefill(0, Ids({1, 2, 3, 4, 5}), cache);
    model_.Prefill(3, Ids({9, 8, 7}), cache);
    model_.PrefillPacked(MakePrefillPack({{1, 0, c.subspan(0, 4)}}, at::kCPU), cache);
  }
  auto pack = [&] {
    return MakePrefillPack({{1, 4, c.subspan(4)}, {2, 0, fresh}}, at::kCPU, 16, 4);
  };
  const at::Tensor slots = Ids({3, 0}), tokens = Ids({11, 12}), positions = Ids({3, 5});
  const at::Tensor prefill = model_.PrefillPacked(pack(), &apart);
  const at::Tensor decode = model_.Decode(slots, tokens, positions, 6, &apart);
  const auto [mixed_prefill, mixed_decode] =
      model_.PrefillAndDecode(pack(), slots, tokens, positions, 6, &together);
  ASSERT_EQ(mixed_prefill.sizes(), prefill.sizes());
  ASSERT_EQ(mixed_decode.sizes(), decode.sizes());
  EXPECT_LE(RelativeError(mixed_prefill.narrow(0, 0, 2), prefill.narrow(0, 0, 2)), 1e-5);
  EXPECT_LE(RelativeError(mixed_decode, decode), 1e-5);
  for (int64_t layer = 0; layer < config_.n_layer; ++layer) {
    for (int64_t slot = 0; slot < 4; ++slot) {
      EXPECT_LE(RelativeError(together.keys(layer)[slot], apart.keys(layer)[slot]), 1e-5)
          << "layer " << layer << " slot " << slot;
      EXPECT_LE(RelativeError(together.values(layer)[slot], apart.values(layer)[slot]), 1e-5);
    }
  }
}

// The default slot-indexed decode (what the CUDA runner calls on models
// without a fused path) gathers each row's token and position by slot.
TEST_F(Gpt2ModelTest, DecodeSlotsReadsTokensAndPositionsBySlot) {
  model_.Prefill(0, Ids({1, 2, 3, 4, 5}), &cache_);
  model_.Prefill(2, Ids({9, 8}), &cache_);
  const at::Tensor by_row = model_.Decode(Ids({2, 0}), Ids({12, 11}), Ids({2, 5}), 6, &cache_);
  // Slot 1 is not in the batch: its -1 entries must never be read.
  const CausalLm::SlotDecode by_slot =
      model_.DecodeSlots(Ids({2, 0}), Ids({11, -1, 12}), Ids({5, -1, 2}), true, &cache_);
  EXPECT_TRUE(at::allclose(by_slot.logits, by_row, 1e-6, 1e-5));
  EXPECT_TRUE(by_slot.tokens.equal(by_row.argmax(-1)));
  const at::Tensor expected =
      at::log_softmax(by_row, -1).gather(1, by_row.argmax(-1).unsqueeze(1)).squeeze(1);
  EXPECT_TRUE(at::allclose(by_slot.logprobs, expected, 1e-6, 1e-5));
}

}  // namespace
}  // namespace tandem
