#include "core/text/embedded_vocab.h"

// TANDEM_GPT2_VOCAB_JSON and TANDEM_GPT2_MERGES_TXT are absolute paths set by
// CMake; the assembler copies the files into .rodata.
#define TANDEM_INCBIN(symbol, path)                                 \
  __asm__(".section .rodata\n"                                      \
          ".balign 16\n"                                            \
          ".global " #symbol "_begin\n" #symbol "_begin:\n"         \
          ".incbin \"" path "\"\n"                                  \
          ".global " #symbol "_end\n" #symbol "_end:\n"             \
          ".byte 0\n"                                               \
          ".previous\n");                                           \
  extern "C" const char symbol##_begin[];                           \
  extern "C" const char symbol##_end[]

TANDEM_INCBIN(tandem_gpt2_vocab_json, TANDEM_GPT2_VOCAB_JSON);
TANDEM_INCBIN(tandem_gpt2_merges_txt, TANDEM_GPT2_MERGES_TXT);

namespace tandem {

absl::string_view EmbeddedGpt2VocabJson() {
  return absl::string_view(tandem_gpt2_vocab_json_begin,
                           tandem_gpt2_vocab_json_end - tandem_gpt2_vocab_json_begin);
}

absl::string_view EmbeddedGpt2Merges() {
  return absl::string_view(tandem_gpt2_merges_txt_begin,
                           tandem_gpt2_merges_txt_end - tandem_gpt2_merges_txt_begin);
}

}  // namespace tandem
