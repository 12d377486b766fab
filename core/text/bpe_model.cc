#include "core/text/bpe_model.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/text/byte_level.h"

namespace tandem {

absl::StatusOr<std::unique_ptr<BpeModel>> BpeModel::Create(
    absl::Span<const VocabEntry> vocab, absl::Span<const Merge> merges,
    bool ignore_merges, size_t* bad_merge) {
  if (bad_merge != nullptr) *bad_merge = SIZE_MAX;
  if (vocab.empty()) {
    return absl::InvalidArgumentError("the vocab is empty");
  }
  std::unique_ptr<BpeModel> model(new BpeModel(ignore_merges));
  int32_t max_id = 0;
  for (const VocabEntry& entry : vocab) {
    if (entry.id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("token \"", entry.token, "\" has a negative id"));
    }
    max_id = std::max(max_id, entry.id);
  }
  // Token (byte-level alphabet) -> id, for the merges; the keys are the
  // caller's, alive for this call.
  absl::flat_hash_map<absl::string_view, int32_t> ids;
  ids.reserve(vocab.size());
  model->token_bytes_.resize(static_cast<size_t>(max_id) + 1);
  model->valid_.assign(static_cast<size_t>(max_id) + 1, false);
  // Tokens outside the byte-level alphabet stand for their own UTF-8 text;
  // where one collides with a true byte-level token, the latter wins the
  // raw-bytes lookup.
  std::vector<bool> fallback(model->valid_.size(), false);
  for (const VocabEntry& entry : vocab) {
    if (!ids.emplace(entry.token, entry.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("token \"", entry.token, "\" is listed twice"));
    }
    if (model->valid_[entry.id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", entry.id, " is used by more than one token"));
    }
    model->valid_[entry.id] = true;
    if (!ByteLevelToBytes(entry.token, &model->token_bytes_[entry.id])) {
      model->token_bytes_[entry.id] = std::string(entry.token);
      fallback[entry.id] = true;
    }
  }
  model->id_of_bytes_.reserve(vocab.size());
  for (bool fallback_pass : {false, true}) {
    for (size_t id = 0; id < model->valid_.size(); ++id) {
      if (model->valid_[id] && fallback[id] == fallback_pass) {
        model->id_of_bytes_.emplace(model->token_bytes_[id],
                                    static_cast<int32_t>(id));
      }
    }
  }
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    AppendUtf8(ByteLevelChar(static_cast<unsigned char>(b)), &symbol);
    auto it = ids.find(symbol);
    if (it == ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the vocab lacks the byte-level symbol \"", symbol, "\" for byte ",
          b));
    }
    model->byte_ids_[b] = it->second;
  }

  size_t capacity = 16;
  while (capacity < 2 * merges.size()) capacity *= 2;
  model->merge_slots_.assign(capacity, MergeSlot{kEmptyKey, 0, 0});
  model->merge_mask_ = capacity - 1;
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const Merge& merge = merges[rank];
    const auto error = [&](absl::string_view what) {
      if (bad_merge != nullptr) *bad_merge = rank;
      return absl::InvalidArgumentError(what);
    };
    const auto left = ids.find(merge.left);
    if (left == ids.end()) return error("left symbol is not in the vocab");
    const auto right = ids.find(merge.right);
    if (right == ids.end()) return error("right symbol is not in the vocab");
    joined.assign(merge.left.data(), merge.left.size());
    joined.append(merge.right.data(), merge.right.size());
    const auto result = ids.find(joined);
    if (result == ids.end()) return error("merged symbol is not in the vocab");
    model->InsertMerge(PairKey(left->second, right->second),
                       static_cast<int32_t>(rank), result->second);
  }
  model->num_merges_ = merges.size();
  return model;
}

void BpeModel::InsertMerge(uint64_t key, int32_t rank, int32_t result) {
  for (size_t i = MergeSlotIndex(key);; i = (i + 1) & merge_mask_) {
    MergeSlot& slot = merge_slots_[i];
    if (slot.key == key || slot.key == kEmptyKey) {
      slot = MergeSlot{key, rank, result};
      return;
    }
  }
}

const BpeModel::MergeSlot* BpeModel::FindMerge(int32_t left,
                                               int32_t right) const {
  const uint64_t key = PairKey(left, right);
  for (size_t i = MergeSlotIndex(key);; i = (i + 1) & merge_mask_) {
    const MergeSlot& slot = merge_slots_[i];
    if (slot.key == key) return &slot;
    if (slot.key == kEmptyKey) return nullptr;
  }
}

void BpeModel::Tokenize(absl::string_view piece,
                        std::vector<int32_t>* out) const {
  // Symbols form a doubly linked list over the piece's bytes; candidate pairs
  // sit in a min-heap keyed by (rank, position), so the lowest-ranked pair is
  // merged first and equal pairs left to right, as in Hugging Face's BPE
  // (and GPT-2's encoder).
  struct Symbol {
    int32_t id;    // -1 once merged into its left neighbour.
    int32_t prev;  // -1 at the start.
    int32_t next;  // -1 at the end.
  };
  struct Candidate {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t result;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  if (piece.empty()) return;
  if (piece.size() == 1) {
    out->push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  if (ignore_merges_) {
    const auto it = id_of_bytes_.find(piece);
    if (it != id_of_bytes_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  const int32_t n = static_cast<int32_t>(piece.size());
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = {byte_ids_[static_cast<unsigned char>(piece[i])], i - 1,
                  i + 1 < n ? i + 1 : -1};
  }
  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(
      std::greater<>(), std::move(storage));
  const auto push = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    const MergeSlot* merge = FindMerge(symbols[left].id, symbols[right].id);
    if (merge == nullptr) return;
    heap.push({merge->rank, left, right, symbols[left].id, symbols[right].id,
               merge->result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& left = symbols[c.left];
    if (left.id != c.left_id || left.next != c.right ||
        symbols[c.right].id != c.right_id) {
      continue;  // Stale: one side has been merged since.
    }
    left.id = c.result;
    left.next = symbols[c.right].next;
    if (left.next >= 0) symbols[left.next].prev = c.left;
    symbols[c.right].id = -1;
    push(left.prev);
    push(c.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    out->push_back(symbols[i].id);
  }
}

const std::string& BpeModel::TokenBytes(int32_t id) const {
  static const std::string* const kEmpty = new std::string();
  return IsValidId(id) ? token_bytes_[id] : *kEmpty;
}

std::optional<int32_t> BpeModel::IdOfBytes(absl::string_view bytes) const {
  const auto it = id_of_bytes_.find(bytes);
  if (it == id_of_bytes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tandem
