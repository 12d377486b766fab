#include "core/text/unicode_normalizer.h"

#include <cstdlib>
#include <utility>

#include <utf8proc.h>

#include "core/text/utf8.h"

namespace tandem {
namespace {

utf8proc_option_t Options(NormalizationForm form) {
  switch (form) {
    case NormalizationForm::kNFC:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case NormalizationForm::kNFD:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case NormalizationForm::kNFKC:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE |
                                            UTF8PROC_COMPAT);
    case NormalizationForm::kNFKD:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE |
                                            UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

// Appends the normalization of well-formed UTF-8 `run` to *out.
void AppendNormalized(absl::string_view run, NormalizationForm form,
                      std::string* out) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t length = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
      static_cast<utf8proc_ssize_t>(run.size()), &mapped, Options(form));
  if (length < 0) {
    out->append(run.data(), run.size());  // Defensive: utf8proc refused it.
  } else {
    out->append(reinterpret_cast<const char*>(mapped),
                static_cast<size_t>(length));
  }
  std::free(mapped);
}

// One form over the whole text: valid runs normalized, other bytes copied.
std::string NormalizeOnce(absl::string_view text, NormalizationForm form) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t run_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Sequence seq = ScanUtf8Sequence(text, pos);
    if (seq.kind == Utf8SequenceKind::kValid) {
      pos += seq.length;
      continue;
    }
    if (pos > run_start) {
      AppendNormalized(text.substr(run_start, pos - run_start), form, &out);
    }
    out.append(text.data() + pos, seq.length);
    pos += seq.length;
    run_start = pos;
  }
  if (pos > run_start) {
    AppendNormalized(text.substr(run_start, pos - run_start), form, &out);
  }
  return out;
}

}  // namespace

bool UnicodeNormalizer::Normalize(absl::string_view text,
                                  std::string* out) const {
  if (forms_.empty()) return false;
  bool ascii = true;
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return false;  // Every form leaves ASCII as it is.
  std::string current(text);
  for (NormalizationForm form : forms_) current = NormalizeOnce(current, form);
  *out = std::move(current);
  return true;
}

}  // namespace tandem
