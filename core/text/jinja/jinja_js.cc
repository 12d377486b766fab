#include "core/text/jinja/jinja_js.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tandem::jinja {
namespace {

struct CaseRange {
  uint32_t first;
  uint32_t last;
  uint8_t stride;
  int32_t delta;
};
struct CaseSpecial {
  uint32_t cp;
  uint32_t to[3];  // zero-padded
};
struct CodePointRange {
  uint32_t first;
  uint32_t last;
};

#include "core/text/jinja/jinja_case_tables.inc"

constexpr char32_t kReplacement = 0xFFFD;

template <size_t N>
bool InRanges(const CodePointRange (&ranges)[N], char32_t cp) {
  const CodePointRange* end = ranges + N;
  const CodePointRange* it = std::upper_bound(
      ranges, end, cp, [](char32_t c, const CodePointRange& r) { return c < r.first; });
  return it != ranges && cp <= (it - 1)->last;
}

// Appends the mapping of `cp` from (specials, ranges); false if it has none.
template <size_t S, size_t R>
bool MapCase(const CaseSpecial (&specials)[S], const CaseRange (&ranges)[R], char32_t cp,
             std::string* out) {
  const CaseSpecial* send = specials + S;
  const CaseSpecial* s = std::lower_bound(
      specials, send, cp, [](const CaseSpecial& e, char32_t c) { return e.cp < c; });
  if (s != send && s->cp == cp) {
    for (uint32_t to : s->to) {
      if (to != 0) AppendUtf8(to, out);
    }
    return true;
  }
  const CaseRange* rend = ranges + R;
  const CaseRange* r = std::upper_bound(
      ranges, rend, cp, [](char32_t c, const CaseRange& e) { return c < e.first; });
  if (r == ranges) return false;
  --r;
  if (cp > r->last || (cp - r->first) % r->stride != 0) return false;
  AppendUtf8(static_cast<char32_t>(static_cast<int64_t>(cp) + r->delta), out);
  return true;
}

std::vector<char32_t> DecodeAll(std::string_view s) {
  std::vector<char32_t> cps;
  cps.reserve(s.size());
  for (size_t i = 0; i < s.size();) cps.push_back(DecodeUtf8(s, &i));
  return cps;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The length of the StrDecimalLiteral (sign, digits, fraction, exponent, or
// Infinity) at the start of s; 0 if there is none.
size_t DecimalLiteralLength(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (s.substr(i, 8) == "Infinity") return i + 8;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    size_t frac = 0;
    while (j < s.size() && IsDigit(s[j])) ++j, ++frac;
    if (digits + frac > 0) {
      i = j;
      digits += frac;
    }
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp = 0;
    while (j < s.size() && IsDigit(s[j])) ++j, ++exp;
    if (exp > 0) i = j;
  }
  return i;
}

double ParseDecimal(std::string_view literal) {
  std::string text(literal);
  const size_t inf = text.find("Infinity");
  if (inf != std::string::npos) {
    return text[0] == '-' ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity();
  }
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace

char32_t DecodeUtf8(std::string_view s, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(*i);
  if (b0 < 0x80) {
    ++*i;
    return b0;
  }
  int len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++*i;
    return kReplacement;
  }
  if (*i + len > s.size()) {
    ++*i;
    return kReplacement;
  }
  for (int k = 1; k < len; ++k) {
    const unsigned char b = byte(*i + k);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return kReplacement;
  }
  *i += len;
  return cp;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = kReplacement;
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsJsSpace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
    case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
    case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

size_t JsSpaceLength(std::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return IsJsSpace(c) ? 1 : 0;
  size_t j = i;
  const char32_t cp = DecodeUtf8(s, &j);
  return IsJsSpace(cp) && cp != kReplacement ? j - i : 0;
}

std::string_view JsTrimStart(std::string_view s) {
  size_t i = 0;
  while (size_t n = JsSpaceLength(s, i)) i += n;
  return s.substr(i);
}

std::string_view JsTrimEnd(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    // Step back to the start of the last code point.
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) {
      --start;
    }
    if (JsSpaceLength(s, start) != end - start) break;
    end = start;
  }
  return s.substr(0, end);
}

std::string_view JsTrim(std::string_view s) { return JsTrimEnd(JsTrimStart(s)); }

std::u16string ToUtf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = DecodeUtf8(s, &i);
    if (cp < 0x10000) {
      out.push_back(static_cast<char16_t>(cp));
    } else {
      out.push_back(static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    }
  }
  return out;
}

std::string FromUtf16(std::u16string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char16_t u = s[i];
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      AppendUtf8(0x10000 + ((static_cast<char32_t>(u) - 0xD800) << 10) + (s[i + 1] - 0xDC00),
                 &out);
      ++i;
    } else {
      AppendUtf8(u >= 0xD800 && u <= 0xDFFF ? kReplacement : u, &out);
    }
  }
  return out;
}

size_t Utf16Length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) n += DecodeUtf8(s, &i) >= 0x10000 ? 2 : 1;
  return n;
}

int CompareUtf16(std::string_view a, std::string_view b) {
  const std::u16string ua = ToUtf16(a);
  const std::u16string ub = ToUtf16(b);
  return ua.compare(ub);
}

std::vector<std::string> SplitCodePoints(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    std::string cp;
    AppendUtf8(DecodeUtf8(s, &i), &cp);
    out.push_back(std::move(cp));
  }
  return out;
}

std::string JsToUpper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = DecodeUtf8(s, &i);
    if (cp >= 'a' && cp <= 'z') {
      out.push_back(static_cast<char>(cp - 32));
    } else if (cp < 0x80 || !MapCase(kUpperSpecials, kUpperRanges, cp, &out)) {
      AppendUtf8(cp, &out);
    }
  }
  return out;
}

std::string JsToLower(std::string_view s) {
  const std::vector<char32_t> cps = DecodeAll(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t cp = cps[i];
    if (cp >= 'A' && cp <= 'Z') {
      out.push_back(static_cast<char>(cp + 32));
    } else if (cp == 0x3A3) {  // Σ: final sigma when it ends a cased word
      bool preceded = false;
      for (size_t j = i; j-- > 0;) {
        if (InRanges(kCaseIgnorable, cps[j])) continue;
        preceded = InRanges(kCased, cps[j]);
        break;
      }
      bool followed = false;
      for (size_t j = i + 1; j < cps.size(); ++j) {
        if (InRanges(kCaseIgnorable, cps[j])) continue;
        followed = InRanges(kCased, cps[j]);
        break;
      }
      AppendUtf8(preceded && !followed ? 0x3C2 : 0x3C3, &out);
    } else if (cp < 0x80 || !MapCase(kLowerSpecials, kLowerRanges, cp, &out)) {
      AppendUtf8(cp, &out);
    }
  }
  return out;
}

std::string JsNumberToString(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == 0) return "0";
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  std::string out = x < 0 ? "-" : "";
  char buf[64];
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), std::fabs(x), std::chars_format::scientific);
  const std::string_view sci(buf, r.ptr - buf);  // d[.ddd]e±XX
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  const int k = static_cast<int>(digits.size());
  const int n = std::atoi(std::string(sci.substr(e + 1)).c_str()) + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(n - k, '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, n);
    out += '.';
    out += digits.substr(n);
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(-n, '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

std::string JsNumberToJson(double x) {
  return std::isfinite(x) ? JsNumberToString(x) : "null";
}

std::string JsToFixed1(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= 1e21) return JsNumberToString(x);
  char buf[400];
  std::snprintf(buf, sizeof(buf), "%.1f", x);
  std::string out(buf);
  if (out == "-0.0") out = "0.0";  // (-0).toFixed(1) is "0.0"
  return out;
}

double JsStringToNumber(std::string_view s) {
  s = JsTrim(s);
  if (s.empty()) return 0;
  if (s.size() > 2 && s[0] == '0') {
    int base = 0;
    switch (s[1]) {
      case 'x': case 'X': base = 16; break;
      case 'o': case 'O': base = 8; break;
      case 'b': case 'B': base = 2; break;
      default: break;
    }
    if (base != 0) {
      double value = 0;
      for (char c : s.substr(2)) {
        int d = -1;
        if (IsDigit(c)) d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0 || d >= base) return std::numeric_limits<double>::quiet_NaN();
        value = value * base + d;
      }
      return value;
    }
  }
  if (DecimalLiteralLength(s) != s.size()) return std::numeric_limits<double>::quiet_NaN();
  return ParseDecimal(s);
}

double JsParseInt(std::string_view s) {
  s = JsTrimStart(s);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const size_t start = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == start) return std::numeric_limits<double>::quiet_NaN();
  const double value = std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
  return negative ? -value : value;
}

double JsParseFloat(std::string_view s) {
  s = JsTrimStart(s);
  const size_t n = DecimalLiteralLength(s);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  return ParseDecimal(s.substr(0, n));
}

std::string JsonQuote(std::string_view s, bool ensure_ascii) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto escape_unit = [](char32_t u, std::string* out) {
    *out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(u >> shift) & 0xF]);
  };
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const size_t begin = i;
    const char32_t cp = DecodeUtf8(s, &i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (cp < 0x20) {
      escape_unit(cp, &out);
    } else if (ensure_ascii && cp >= 0x7F) {
      if (cp >= 0x10000) {
        escape_unit(0xD800 + ((cp - 0x10000) >> 10), &out);
        escape_unit(0xDC00 + ((cp - 0x10000) & 0x3FF), &out);
      } else {
        escape_unit(cp, &out);
      }
    } else if (cp == kReplacement) {
      AppendUtf8(cp, &out);  // an invalid byte decodes as U+FFFD
    } else {
      out.append(s.substr(begin, i - begin));
    }
  }
  out += '"';
  return out;
}

}  // namespace tandem::jinja
