// Streaming token-id -> UTF-8 text conversion for one generated sequence.

#ifndef TANDEM_CORE_TEXT_INCREMENTAL_DETOKENIZER_H_
#define TANDEM_CORE_TEXT_INCREMENTAL_DETOKENIZER_H_

#include <cstdint>
#include <string>

#include "core/text/tokenizer.h"

namespace tandem {

// Turns a stream of token ids into text that is always valid UTF-8 made of
// whole characters. Byte-level BPE tokens can end in the middle of a
// multi-byte character; such a trailing, still-completable sequence (at most
// 3 bytes) is held back until the next token completes it. Bytes that can
// never become valid UTF-8 are replaced by U+FFFD, one per maximal invalid
// subpart (Unicode's "substitution of maximal subparts", as Python's
// bytes.decode("utf-8", errors="replace") does), so the concatenation of all
// Append() results plus Flush() equals
// Decode(ids).decode("utf-8", errors="replace").
//
// Not thread-safe; use one instance per sequence. Does not own the
// tokenizer, which must outlive it.
class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer* tokenizer);

  IncrementalDetokenizer(const IncrementalDetokenizer&) = default;
  IncrementalDetokenizer& operator=(const IncrementalDetokenizer&) = default;

  // Returns the text completed by this token (possibly empty). Invalid ids
  // contribute no bytes.
  std::string Append(int32_t token_id);

  // Returns whatever is held back as U+FFFD (the held bytes are always one
  // truncated sequence, hence at most one U+FFFD) and empties the buffer, so
  // the detokenizer can be reused for a new sequence.
  std::string Flush();

  // Number of bytes held back (0 to 3).
  int pending_bytes() const { return static_cast<int>(pending_.size()); }

 private:
  const Tokenizer* tokenizer_;  // Not owned.
  // Trailing bytes that form a valid but incomplete UTF-8 sequence.
  std::string pending_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_INCREMENTAL_DETOKENIZER_H_
