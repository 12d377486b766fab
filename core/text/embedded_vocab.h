// GPT-2's vocab.json and merges.txt, compiled into the binary so the default
// model works offline.
#ifndef TANDEM_CORE_TEXT_EMBEDDED_VOCAB_H_
#define TANDEM_CORE_TEXT_EMBEDDED_VOCAB_H_

#include "absl/strings/string_view.h"

namespace tandem {

absl::string_view EmbeddedGpt2VocabJson();
absl::string_view EmbeddedGpt2Merges();

}  // namespace tandem

#endif  // TANDEM_CORE_TEXT_EMBEDDED_VOCAB_H_
