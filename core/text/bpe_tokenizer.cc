// BpeTokenizer's construction from parts (FromParts) and its encoding and
// decoding; loading from tokenizer.json is in bpe_tokenizer_loader.cc.
// Threading and ownership: see bpe_tokenizer.h.
#include "core/text/bpe_tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/text/bpe_model.h"
#include "core/text/regex_splitter.h"
#include "core/text/tokenizer_json_reader.h"

namespace tandem {

using tokenizer_json::Quote;

BpeTokenizer::BpeTokenizer() = default;
BpeTokenizer::~BpeTokenizer() = default;

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::FromParts(
    std::unique_ptr<BpeModel> model, Parts parts) {
  if (model == nullptr) return absl::InvalidArgumentError("no BPE model");
  if (parts.pre_tokenizer.empty()) return absl::InvalidArgumentError("no pre-tokenizer");
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  tok->vocab_size_ = model->vocab_size();
  tok->model_ = std::move(model);
  std::vector<AddedToken> raw, normalized;
  for (AddedToken& token : parts.added_tokens) {
    if (token.id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("added token ", Quote(token.content), " has a negative id"));
    }
    tok->vocab_size_ = std::max(tok->vocab_size_, token.id + 1);
    tok->added_content_[token.id] = token.content;
    tok->added_ids_[token.content] = token.id;
    if (token.special) tok->special_ids_.insert(token.id);
    (token.normalized && !parts.normalizer.empty() ? normalized : raw).push_back(token);
  }
  if (!raw.empty()) tok->raw_matcher_ = std::make_unique<AddedTokenMatcher>(raw);
  if (!normalized.empty()) tok->normalized_matcher_ = std::make_unique<AddedTokenMatcher>(normalized);
  if (!parts.normalizer.empty()) {
    tok->normalizer_ = std::make_unique<UnicodeNormalizer>(std::move(parts.normalizer));
  }
  tok->pre_tokenizer_ = std::move(parts.pre_tokenizer);
  for (const std::vector<int32_t>* ids : {&parts.prefix_ids, &parts.suffix_ids}) {
    for (int32_t id : *ids) {
      if (!tok->IsValidId(id)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the post-processor's token id ", id, " is not a token"));
      }
    }
  }
  for (const std::optional<int32_t>& id : {parts.bos_token_id, parts.eos_token_id}) {
    if (id.has_value() && !tok->IsValidId(*id)) {
      return absl::InvalidArgumentError(absl::StrCat("the bos/eos id ", *id, " is not a token"));
    }
  }
  tok->prefix_ids_ = std::move(parts.prefix_ids);
  tok->suffix_ids_ = std::move(parts.suffix_ids);
  tok->bos_token_id_ = parts.bos_token_id;
  tok->eos_token_id_ = parts.eos_token_id;
  tok->add_bos_token_ = parts.add_bos_token;
  tok->chat_template_ = std::move(parts.chat_template);
  return tok;
}

std::vector<int32_t> BpeTokenizer::Encode(absl::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  if (raw_matcher_ == nullptr) {
    EncodeSegment(text, &ids);
    return ids;
  }
  std::vector<AddedTokenMatcher::Segment> segments;
  raw_matcher_->Split(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
    } else {
      EncodeSegment(segment.text, &ids);
    }
  }
  return ids;
}

std::vector<int32_t> BpeTokenizer::EncodeWithSpecialTokens(absl::string_view text) const {
  std::vector<int32_t> ids = prefix_ids_;
  const std::vector<int32_t> body = Encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

std::vector<int32_t> BpeTokenizer::EncodePrompt(absl::string_view text) const {
  std::vector<int32_t> ids = prefix_ids_;
  const std::vector<int32_t> body = Encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

void BpeTokenizer::EncodeSegment(absl::string_view text, std::vector<int32_t>* out) const {
  std::string normalized;
  if (normalizer_ != nullptr && normalizer_->Normalize(text, &normalized)) text = normalized;
  if (normalized_matcher_ == nullptr) {
    EncodeNormalized(text, out);
    return;
  }
  std::vector<AddedTokenMatcher::Segment> segments;
  normalized_matcher_->Split(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      out->push_back(segment.id);
    } else {
      EncodeNormalized(segment.text, out);
    }
  }
}

void BpeTokenizer::EncodeNormalized(absl::string_view text, std::vector<int32_t>* out) const {
  if (text.empty()) return;
  std::vector<absl::string_view> pieces = {text};
  std::vector<absl::string_view> next;
  std::deque<std::string> prefixed;  // Pieces with a space prepended.
  for (const PreTokenizerStep& step : pre_tokenizer_) {
    next.clear();
    for (absl::string_view piece : pieces) {
      if (step.add_prefix_space && piece.front() != ' ') {
        prefixed.push_back(absl::StrCat(" ", piece));
        piece = prefixed.back();
      }
      if (step.split != nullptr) {
        step.split->Split(piece, &next);
      } else {
        next.push_back(piece);
      }
    }
    pieces.swap(next);
  }
  for (absl::string_view piece : pieces) model_->Tokenize(piece, out);
}

std::string BpeTokenizer::Decode(absl::Span<const int32_t> ids) const {
  size_t size = 0;
  for (int32_t id : ids) size += TokenBytes(id).size();
  std::string text;
  text.reserve(size);
  for (int32_t id : ids) text += TokenBytes(id);
  return text;
}

const std::string& BpeTokenizer::TokenBytes(int32_t id) const {
  if (!added_content_.empty()) {
    const auto it = added_content_.find(id);
    if (it != added_content_.end()) return it->second;
  }
  return model_->TokenBytes(id);
}

bool BpeTokenizer::IsValidId(int32_t id) const {
  return model_->IsValidId(id) || added_content_.contains(id);
}

int32_t BpeTokenizer::vocab_size() const { return vocab_size_; }

int32_t BpeTokenizer::model_vocab_size() const { return model_->vocab_size(); }

std::optional<int32_t> BpeTokenizer::TokenId(absl::string_view token) const {
  const auto it = added_ids_.find(token);
  if (it != added_ids_.end()) return it->second;
  return model_->IdOfBytes(token);
}

bool BpeTokenizer::IsSpecialToken(int32_t id) const { return special_ids_.contains(id); }

}  // namespace tandem
