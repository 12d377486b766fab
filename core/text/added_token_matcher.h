// Finds a tokenizer's added tokens (special tokens such as "<|eot_id|>",
// and Hugging Face's other added tokens) in text before pre-tokenization.
#ifndef TANDEM_CORE_TEXT_ADDED_TOKEN_MATCHER_H_
#define TANDEM_CORE_TEXT_ADDED_TOKEN_MATCHER_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace tandem {

// One entry of tokenizer.json's "added_tokens".
struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  // Whether the match swallows the whitespace on its left / right.
  bool lstrip = false;
  bool rstrip = false;
  // Whether the token only matches as a whole word (no word character
  // directly before or after it).
  bool single_word = false;
  // Whether it is matched in the normalized text (else in the raw text).
  bool normalized = false;
};

// Immutable after construction: Split may be called from many threads at
// once. Keeps its own copy of the tokens' contents.
class AddedTokenMatcher {
 public:
  // Tokens with empty content are ignored.
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  struct Segment {
    absl::string_view text;  // The token's match, or plain text.
    int32_t id;              // The token's id; -1 for plain text.
  };

  // Cuts `text` into plain segments and token matches, in order, as Hugging
  // Face's AddedVocabulary does: the leftmost match wins and, among matches
  // starting there, the longest; matches do not overlap. A single_word
  // token's match next to a word character is dropped (its text stays
  // plain); lstrip/rstrip extend a match over the adjacent Unicode
  // whitespace (which then belongs to the token, so does not survive a
  // round trip). Plain segments are never empty.
  void Split(absl::string_view text, std::vector<Segment>* out) const;

  bool empty() const { return tokens_.empty(); }

 private:
  struct Node {
    int32_t token = -1;  // Index into tokens_ ending here, or -1.
    std::vector<std::pair<unsigned char, int32_t>> children;  // byte -> node
  };

  // The longest token starting at text[pos]: index into tokens_ or -1.
  int32_t LongestMatch(absl::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  // A byte trie over the contents; nodes_[0] is the root.
  std::vector<Node> nodes_;
  // Whether some token starts with this byte.
  std::array<bool, 256> first_byte_{};
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_ADDED_TOKEN_MATCHER_H_
