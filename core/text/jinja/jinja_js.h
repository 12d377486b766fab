// JavaScript's string and number semantics, on UTF-8 text.
//
// @huggingface/jinja is written in JavaScript: its strings are UTF-16, its
// numbers are doubles, `trim` and `\s` use JavaScript's idea of whitespace,
// `upper`/`lower` use String.prototype.toUpperCase/toLowerCase, and numbers
// print as Number.prototype.toString prints them. Rendering byte-identically
// means doing the same on the UTF-8 strings the interpreter holds; these are
// the helpers that do it.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_JS_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_JS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::jinja {

// The code point at s[*i], advancing *i past it. An invalid or truncated
// UTF-8 sequence decodes as U+FFFD, one byte at a time (as a JavaScript
// TextDecoder would have replaced it before the text reached JavaScript).
char32_t DecodeUtf8(std::string_view s, size_t* i);
void AppendUtf8(char32_t cp, std::string* out);

// JavaScript's WhiteSpace and LineTerminator code points: what `\s` matches
// and String.prototype.trim removes.
bool IsJsSpace(char32_t cp);
// The UTF-8 length of the whitespace character at s[i], 0 if there is none.
size_t JsSpaceLength(std::string_view s, size_t i);
std::string_view JsTrimStart(std::string_view s);
std::string_view JsTrimEnd(std::string_view s);
std::string_view JsTrim(std::string_view s);

// UTF-16 code units, as JavaScript indexes strings. Unpaired surrogates
// become U+FFFD on the way back to UTF-8 (as TextEncoder writes them).
std::u16string ToUtf16(std::string_view s);
std::string FromUtf16(std::u16string_view s);
// String.prototype.length.
size_t Utf16Length(std::string_view s);
// The order of JavaScript's `<` on strings (by UTF-16 code unit): <0, 0, >0.
int CompareUtf16(std::string_view a, std::string_view b);
// Array.from(s): the string's code points, each as a string.
std::vector<std::string> SplitCodePoints(std::string_view s);

// String.prototype.toUpperCase / toLowerCase (locale-independent, with
// the special casings and toLowerCase's Final_Sigma rule).
std::string JsToUpper(std::string_view s);
std::string JsToLower(std::string_view s);

// Number.prototype.toString() / String(number).
std::string JsNumberToString(double x);
// JSON.stringify(number): as above, but NaN and the infinities are "null".
std::string JsNumberToJson(double x);
// Number.prototype.toFixed(1).
std::string JsToFixed1(double x);
// Number(string): the ToNumber conversion of a string (NaN when invalid).
double JsStringToNumber(std::string_view s);
// parseInt(s, 10) and parseFloat(s) (NaN when nothing parses).
double JsParseInt(std::string_view s);
double JsParseFloat(std::string_view s);

// JSON.stringify(string), quotes included; with `ensure_ascii`, code units
// from U+007F up escaped as \uXXXX (as @huggingface/jinja's tojson does).
std::string JsonQuote(std::string_view s, bool ensure_ascii = false);

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_JS_H_
