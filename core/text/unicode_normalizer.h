// Unicode normalization (Hugging Face's NFC/NFD/NFKC/NFKD normalizers, alone
// or in a Sequence), with utf8proc.
#ifndef TANDEM_CORE_TEXT_UNICODE_NORMALIZER_H_
#define TANDEM_CORE_TEXT_UNICODE_NORMALIZER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tandem {

enum class NormalizationForm { kNFC, kNFD, kNFKC, kNFKD };

// Immutable: Normalize may be called from many threads at once. A value
// type; copying it copies the list of forms.
class UnicodeNormalizer {
 public:
  // Applies `forms` in order (an empty list normalizes nothing).
  explicit UnicodeNormalizer(std::vector<NormalizationForm> forms)
      : forms_(std::move(forms)) {}

  // Normalizes `text` into *out and returns true, or returns false (leaving
  // *out alone) when the text is unchanged by construction (no forms, or
  // pure ASCII). Each maximal run of well-formed UTF-8 is normalized on its
  // own; bytes that are not well-formed UTF-8 pass through unchanged.
  bool Normalize(absl::string_view text, std::string* out) const;

  bool empty() const { return forms_.empty(); }

 private:
  std::vector<NormalizationForm> forms_;
};

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_UNICODE_NORMALIZER_H_
