#include "core/model/eager_runner.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include <c10/core/InferenceMode.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/model/prefill_pack.h"
#include "core/model/sampler.h"

namespace tandem {
namespace {

at::Tensor HostInt64(const std::vector<int64_t>& values) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong));
}

// Gathers the sampling parameters of every sampled row (prompts' last
// chunks, then decodes) into host tensors and moves them to `device` in one
// go each.
SamplingTensors SamplingFor(const StepPlan& plan, at::Device device,
                            bool* all_greedy) {
  std::vector<float> temperature, top_p, min_p;
  std::vector<int64_t> top_k, seed, offset;
  auto add = [&](const RowSampling& row) {
    temperature.push_back(row.params.temperature);
    top_p.push_back(row.params.top_p);
    min_p.push_back(row.params.min_p);
    top_k.push_back(row.params.top_k);
    seed.push_back(static_cast<int64_t>(row.params.seed));
    offset.push_back(row.rng_offset);
  };
  for (const PrefillItem& item : plan.prefills) {
    if (item.last_chunk) add(item.sampling);
  }
  for (const DecodeItem& item : plan.decodes) add(item.sampling);
  *all_greedy = std::all_of(temperature.begin(), temperature.end(),
                            [](float t) { return t <= 0; });
  auto floats = [&](const std::vector<float>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).to(device);
  };
  return {floats(temperature), HostInt64(top_k).to(device), floats(top_p),
          floats(min_p), HostInt64(seed).to(device), HostInt64(offset).to(device)};
}

}  // namespace

EagerRunner::EagerRunner(ModelDescription description, std::unique_ptr<CausalLm> model,
                         std::unique_ptr<KvCache> cache, at::Device device)
    : description_(std::move(description)),
      model_(std::move(model)),
      cache_(std::move(cache)),
      device_(device) {}

absl::StatusOr<StepOutput> EagerRunner::Step(const StepPlan& plan) {
  const absl::Time start = absl::Now();
  try {
    c10::InferenceMode inference_mode;  // no autograd bookkeeping
    std::vector<at::Tensor> logits;
    const absl::Time forward_start = absl::Now();
    std::optional<PrefillPack> pack;
    if (!plan.prefills.empty()) {
      std::vector<PrefillSegment> segments;
      std::vector<int64_t> sampled;  // segments whose prompt ends here
      for (const PrefillItem& item : plan.prefills) {
        if (item.last_chunk) sampled.push_back(static_cast<int64_t>(segments.size()));
        segments.push_back({item.slot, item.start, item.tokens});
      }
      pack = MakePrefillPack(std::move(segments), device_);
      // An earlier chunk's logits would be dropped: the LM head (on the CPU a
      // read of all its weights, ~2x a tiny model's decode step) runs only
      // for the rows that are sampled.
      if (sampled.size() < plan.prefills.size()) {
        pack->last_rows = pack->last_rows.index_select(0, HostInt64(sampled).to(device_));
      }
    }
    if (!plan.decodes.empty()) {
      std::vector<int64_t> slots, tokens, positions;
      int64_t attend_len = 0;
      for (const DecodeItem& item : plan.decodes) {
        slots.push_back(item.slot);
        tokens.push_back(item.token);
        positions.push_back(item.position);
        attend_len = std::max<int64_t>(attend_len, item.position + 1);
      }
      const at::Tensor slot_ids = HostInt64(slots).to(device_),
                       token_ids = HostInt64(tokens).to(device_),
                       position_ids = HostInt64(positions).to(device_);
      if (pack.has_value()) {  // a mixed step: one forward where the model has one
        auto [prefilled, decoded] = model_->PrefillAndDecode(*pack, slot_ids, token_ids,
                                                             position_ids, attend_len, cache_.get());
        logits = {std::move(prefilled), std::move(decoded)};
      } else {
        logits.push_back(
            model_->Decode(slot_ids, token_ids, position_ids, attend_len, cache_.get()));
      }
    } else if (pack.has_value()) {
      logits.push_back(model_->PrefillPacked(*pack, cache_.get()));
    }
    // The forward's time, split for the prefill budget: a mixed step's
    // decode part is taken to cost what the last decode-only step did.
    const double forward_seconds = absl::ToDoubleSeconds(absl::Now() - forward_start);
    double prefill_seconds = 0, decode_seconds = 0;
    if (plan.prefills.empty()) {
      decode_seconds = last_decode_seconds_ = forward_seconds;
    } else if (plan.decodes.empty()) {
      prefill_seconds = forward_seconds;
    } else {
      decode_seconds = std::min(last_decode_seconds_, 0.9 * forward_seconds);
      prefill_seconds = forward_seconds - decode_seconds;
    }
    bool all_greedy = true;
    const SamplingTensors params = SamplingFor(plan, device_, &all_greedy);
    const at::Tensor rows = at::cat(logits, 0);
    StepOutput output;
    if (rows.size(0) > 0) {
      const SampledTensors sampled = Sampler::Sample(rows, params, all_greedy);
      const at::Tensor tokens = sampled.tokens.to(at::kCPU).contiguous();
      const at::Tensor logprobs = sampled.logprobs.to(at::kCPU).contiguous();
      const int64_t* token_data = tokens.data_ptr<int64_t>();
      const float* logprob_data = logprobs.data_ptr<float>();
      int64_t row = 0;
      for (const PrefillItem& item : plan.prefills) {  // an earlier chunk samples nothing
        output.prefill_tokens.push_back(
            item.last_chunk ? SampledToken{static_cast<int32_t>(token_data[row]),
                                           logprob_data[row]}
                            : SampledToken{});
        row += item.last_chunk;
      }
      for (size_t i = 0; i < plan.decodes.size(); ++i, ++row) {
        output.decode_tokens.push_back(
            {static_cast<int32_t>(token_data[row]), logprob_data[row]});
      }
    } else {
      output.prefill_tokens.resize(plan.prefills.size());
    }
    const double wall = absl::ToDoubleSeconds(absl::Now() - start);
    output.timings.wall_seconds = wall;
    output.timings.prefill_seconds = prefill_seconds;
    output.timings.decode_seconds = decode_seconds;
    output.timings.gpu_busy_seconds = wall;
    return output;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("model step failed: ", e.what()));
  }
}

}  // namespace tandem
