// The model half of a byte-level BPE tokenizer: the vocabulary (ids and the
// raw bytes of each token) and the ranked merges, applied to one pre-token
// at a time. Pre-tokenization, special tokens and normalization are the
// business of BpeTokenizer / Gpt2Tokenizer, which own a BpeModel.
#ifndef TANDEM_CORE_TEXT_BPE_MODEL_H_
#define TANDEM_CORE_TEXT_BPE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tandem {

// Immutable once built by Create: every const method is safe to call from
// many threads at once. Owned by the tokenizer that built it.
class BpeModel {
 public:
  // A vocab entry: the token, written in GPT-2's byte-level alphabet, and
  // its id.
  struct VocabEntry {
    absl::string_view token;
    int32_t id;
  };
  // A merge of two vocab tokens (byte-level alphabet); rank = its index.
  struct Merge {
    absl::string_view left;
    absl::string_view right;
  };

  // Builds the model; the views need only live for the call.
  // InvalidArgumentError, without a file name (the caller adds it): an empty
  // vocab, a token listed twice, an id used twice, a vocab lacking one of
  // the 256 byte symbols, or a merge whose symbols or their concatenation
  // are not in the vocab (then *bad_merge, when given, gets its index; it
  // is set to SIZE_MAX for the other errors). A repeated pair keeps its last
  // rank, as in the reference implementations. With `ignore_merges`, a
  // pre-token that is itself a vocab token is emitted as that token without
  // applying merges (Hugging Face's BPE option of that name, used by
  // Llama 3).
  static absl::StatusOr<std::unique_ptr<BpeModel>> Create(
      absl::Span<const VocabEntry> vocab, absl::Span<const Merge> merges,
      bool ignore_merges, size_t* bad_merge = nullptr);

  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Byte-level BPE of one pre-token (raw bytes, non-empty), appending ids.
  void Tokenize(absl::string_view piece, std::vector<int32_t>* out) const;

  // Raw bytes of a vocab token; empty for an id outside the vocab.
  const std::string& TokenBytes(int32_t id) const;
  bool IsValidId(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < valid_.size() && valid_[id];
  }
  // One more than the largest id.
  int32_t vocab_size() const { return static_cast<int32_t>(valid_.size()); }
  // The id of the vocab token whose raw bytes are `bytes`, if any.
  std::optional<int32_t> IdOfBytes(absl::string_view bytes) const;
  size_t num_merges() const { return num_merges_; }

 private:
  // One slot of the merge table. Empty slots have key kEmptyKey.
  struct MergeSlot {
    uint64_t key;    // PairKey(left id, right id).
    int32_t rank;    // Lowest first.
    int32_t result;  // Id of the merged symbol.
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  explicit BpeModel(bool ignore_merges) : ignore_merges_(ignore_merges) {}

  const MergeSlot* FindMerge(int32_t left, int32_t right) const;
  void InsertMerge(uint64_t key, int32_t rank, int32_t result);
  size_t MergeSlotIndex(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) &
           merge_mask_;
  }
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  const bool ignore_merges_;
  // Raw bytes of each id; index = id. Holes (ids absent from the vocab) are
  // empty and marked false in `valid_`.
  std::vector<std::string> token_bytes_;
  std::vector<bool> valid_;
  // Raw bytes -> id; the keys point into token_bytes_, which never changes
  // after Create.
  absl::flat_hash_map<absl::string_view, int32_t> id_of_bytes_;
  // Vocab id of the single-byte token for each byte value.
  int32_t byte_ids_[256];
  // (left id, right id) -> merge rank and resulting id: an open-addressing
  // table with linear probing, its size a power of two at most half full.
  std::vector<MergeSlot> merge_slots_;
  size_t merge_mask_ = 0;
  size_t num_merges_ = 0;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_BPE_MODEL_H_
