// The Jinja interpreter against its reference, @huggingface/jinja: every case
// of tests/data/chat_template_cases.json (written by
// `node tests/data/make_chat_template_cases.js tests/data/chat_template_cases.json`
// from what @huggingface/jinja renders) must render byte-identically, or fail
// where the reference fails. Then the interpreter's own checks: parse errors
// name the construct and line, raise_exception, the runaway guards, and
// JinjaChatTemplate.
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/text/jinja/jinja_chat_template.h"
#include "core/text/jinja/jinja_js.h"
#include "core/text/jinja/jinja_template.h"
#include "nlohmann/json.hpp"

namespace tandem {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using jinja::JinjaTemplate;
using jinja::Limits;

const nlohmann::ordered_json& Cases() {
  static const nlohmann::ordered_json* const cases = [] {
    std::ifstream in(std::string(TANDEM_TEST_SOURCE_DIR) + "/tests/data/chat_template_cases.json");
    std::stringstream text;
    text << in.rdbuf();
    return new nlohmann::ordered_json(nlohmann::ordered_json::parse(text.str()));
  }();
  return *cases;
}

absl::StatusOr<std::string> RenderSource(const std::string& source,
                                         const nlohmann::ordered_json& context = {},
                                         Limits limits = Limits()) {
  absl::StatusOr<std::unique_ptr<JinjaTemplate>> t = JinjaTemplate::Parse(source, limits);
  if (!t.ok()) return t.status();
  return (*t)->Render(context.is_null() ? nlohmann::ordered_json::object() : context);
}

std::string ParseError(const std::string& source) {
  absl::StatusOr<std::unique_ptr<JinjaTemplate>> t = JinjaTemplate::Parse(source);
  EXPECT_FALSE(t.ok()) << source;
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

TEST(JinjaReferenceTest, EveryCaseRendersAsHuggingFaceJinjaDoes) {
  const nlohmann::ordered_json& data = Cases();
  std::map<std::string, std::unique_ptr<JinjaTemplate>> templates;
  for (auto it = data["templates"].begin(); it != data["templates"].end(); ++it) {
    absl::StatusOr<std::unique_ptr<JinjaTemplate>> t =
        JinjaTemplate::Parse(it.value().get<std::string>());
    ASSERT_TRUE(t.ok()) << it.key() << ": " << t.status();
    templates[it.key()] = *std::move(t);
  }
  int rendered = 0, failed = 0;
  for (const nlohmann::ordered_json& c : data["cases"]) {
    const std::string name = c["template"].get<std::string>();
    SCOPED_TRACE(name + ": " + c["note"].get<std::string>());
    const absl::StatusOr<std::string> out = templates.at(name)->Render(c["context"]);
    if (c.value("error", false)) {
      ++failed;
      EXPECT_FALSE(out.ok()) << "the reference fails with \"" << c["error_message"].get<std::string>()
                             << "\", but this rendered:\n" << *out;
      if (!out.ok()) {
        EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
        if (c.value("raised", false)) {
          EXPECT_EQ(out.status().message(), c["error_message"].get<std::string>());
        } else {
          EXPECT_THAT(std::string(out.status().message()), StartsWith("line "));
        }
      }
      continue;
    }
    ++rendered;
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, c["expected"].get<std::string>());
  }
  EXPECT_GT(rendered, 80);
  EXPECT_GT(failed, 15);
}

TEST(JinjaReferenceTest, ChatTemplateBuildsTheContextTransformersJsBuilds) {
  const nlohmann::ordered_json& data = Cases();
  // The cases with exactly the variables JinjaChatTemplate passes.
  int checked = 0;
  for (const std::string name : {"llama3", "qwen3", "chatml_multiline", "llama31_like"}) {
    std::unique_ptr<JinjaChatTemplate> chat;
    for (const nlohmann::ordered_json& c : data["cases"]) {
      const nlohmann::ordered_json& ctx = c["context"];
      if (c["template"] != name || c.value("error", false) || !ctx.contains("documents") ||
          ctx.size() != 4u + ctx.contains("bos_token") + ctx.contains("eos_token")) {
        continue;
      }
      bool plain = true;  // messages of a role and a string content only
      for (const auto& m : ctx["messages"]) {
        plain = plain && m.size() == 2 && m.contains("role") && m.contains("content") &&
                m["content"].is_string();
      }
      if (!plain) continue;
      if (chat == nullptr) {
        absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> created = JinjaChatTemplate::Create(
            data["templates"][name].get<std::string>(), ctx.value("bos_token", ""),
            ctx.value("eos_token", ""), {"<|eot_id|>"});
        ASSERT_TRUE(created.ok()) << created.status();
        chat = *std::move(created);
      }
      std::vector<ChatMessage> messages;
      for (const auto& m : ctx["messages"]) {
        messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
      }
      const absl::StatusOr<std::string> out =
          chat->RenderMessages(messages, ctx["add_generation_prompt"].get<bool>());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(*out, c["expected"].get<std::string>()) << name << ": " << c["note"];
      if (ctx["add_generation_prompt"].get<bool>()) {
        EXPECT_EQ(*chat->Render(messages), *out);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}

TEST(JinjaParseTest, ErrorsNameTheConstructAndLine) {
  EXPECT_THAT(ParseError("a\nb\n{{ x | nosuchfilter }}"),
              AllOf(HasSubstr("line 3"), HasSubstr("unknown filter `|nosuchfilter`")));
  EXPECT_THAT(ParseError("{{ x | default }}"), HasSubstr("unknown filter `|default`"));
  EXPECT_THAT(ParseError("{{ x | trim() }}"), HasSubstr("unknown filter `|trim(...)`"));
  EXPECT_THAT(ParseError("\n{% include 'other.jinja' %}"),
              AllOf(HasSubstr("line 2"), HasSubstr("unsupported statement {% include %}")));
  EXPECT_THAT(ParseError("{% call foo() %}x{% endcall %}"), HasSubstr("{% call %}"));
  EXPECT_THAT(ParseError("{% if x %}\n\nunclosed"),
              AllOf(HasSubstr("{% if %} at line 1"), HasSubstr("{% endif %}")));
  EXPECT_THAT(ParseError("{% for x in y %}{% endif %}"), HasSubstr("{% endfor %}"));
  EXPECT_THAT(ParseError("x\n{{ 'unterminated }}"), HasSubstr("line 2"));
  EXPECT_THAT(ParseError("{{ a ! b }}"), HasSubstr("Unexpected character: !"));
  EXPECT_THAT(ParseError("{{ x }}\n{{ 'a' 'b' ) }}"), HasSubstr("line 2"));
  EXPECT_THAT(ParseError("\n\n{% if x is divisibleby(3) %}{% endif %}"),
              AllOf(HasSubstr("line 3"), HasSubstr("divisibleby")));
  EXPECT_THAT(ParseError("{{ x is sameas y }}"), HasSubstr("unknown test `is sameas`"));
  EXPECT_THAT(ParseError("{{ dict(a=1) }}"), HasSubstr("unknown function `dict()`"));
  EXPECT_THAT(ParseError("{{ caller() }}"), HasSubstr("unknown function `caller()`"));
  EXPECT_THAT(ParseError("{{ '{}'.format(1) }}"), HasSubstr("unsupported method `.format()`"));
  EXPECT_THAT(ParseError("{{ loop.cycle('a', 'b') }}"), HasSubstr("`.cycle()`"));
  EXPECT_THAT(ParseError("{% macro f() %}{{ varargs }}{% endmacro %}"), HasSubstr("varargs"));
  EXPECT_THAT(ParseError("{% set d['k'] = 1 %}"), HasSubstr("{% set x[...] = ... %}"));
  EXPECT_THAT(ParseError("{{ x|join(',').upper() }}"), HasSubstr("followed by"));
  EXPECT_THAT(ParseError("{# never closed"), HasSubstr("Missing end of comment tag"));
  // Lines count in the source as written, even where trim_blocks removed
  // the newlines before the error.
  EXPECT_THAT(ParseError("{% if a %}\n{% if b %}\n{% endif %}\n{% endif %}\n{{ x|bogus }}"),
              HasSubstr("line 5"));
}

TEST(JinjaParseTest, NestingIsBounded) {
  const std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_THAT(ParseError(deep), HasSubstr("nesting deeper than"));
  auto repeat = [](const std::string& text, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += text;
    return out;
  };
  EXPECT_THAT(ParseError(repeat("{% if true %}", 500)), HasSubstr("nesting deeper than"));
  EXPECT_THAT(ParseError("{{ " + repeat("not ", 5000) + "x }}"), HasSubstr("nesting deeper than"));
  // Chains that the parser reads in loops or by right recursion, a million
  // long: refused with a message, not a stack overflow (in the parser, the
  // validator or the tree's destructor).
  EXPECT_THAT(ParseError("{{ 1" + repeat("+1", 1000000) + " }}"),
              HasSubstr("syntax tree is deeper than"));
  EXPECT_THAT(ParseError("{{ " + repeat("1 if a else ", 100000) + "1 }}"),
              HasSubstr("nesting deeper than"));
  EXPECT_THAT(ParseError("{% if a %}" + repeat("{% elif a %}", 100000) + "{% endif %}"),
              HasSubstr("syntax tree is deeper than"));
}

// A long elif chain is not nesting: 300 branches render (Python's Jinja
// renders them; the chain counted against the interpreter's depth of 128).
TEST(JinjaRenderTest, ALongElifChainRenders) {
  std::string source = "{% if x == 0 %}zero";
  for (int i = 1; i < 300; ++i) {
    source += "{% elif x == " + std::to_string(i) + " %}" + std::to_string(i);
  }
  source += "{% else %}many{% endif %}";
  EXPECT_EQ(*RenderSource(source, {{"x", 299}}), "299");
  EXPECT_EQ(*RenderSource(source, {{"x", 0}}), "zero");
  EXPECT_EQ(*RenderSource(source, {{"x", 1000}}), "many");
}

TEST(JinjaRenderTest, RaiseExceptionIsAnInvalidArgumentWithTheMessage) {
  const absl::StatusOr<std::string> out = RenderSource(
      "{% if messages|length > 1 %}{{ raise_exception('Only ' ~ 1 ~ ' message, please') }}{% endif %}",
      {{"messages", {1, 2}}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "Only 1 message, please");
}

TEST(JinjaRenderTest, RuntimeErrorsNameTheLine) {
  const absl::StatusOr<std::string> out = RenderSource("ok\n{{ 1 + 1 }}\n{{ missing + 1 }}");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              AllOf(StartsWith("line 3: "), HasSubstr("undefined")));
  EXPECT_THAT(std::string(RenderSource("{% break %}").status().message()),
              HasSubstr("outside of a loop"));
}

TEST(JinjaRenderTest, RecursionIsBounded) {
  const absl::StatusOr<std::string> out =
      RenderSource("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("nests deeper than"));
  // Bounded recursion is fine.
  EXPECT_EQ(*RenderSource("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}"
                          "{% endmacro %}{{ f(5) }}"),
            "54321");
}

TEST(JinjaRenderTest, OutputSizeIsBounded) {
  Limits limits;
  limits.max_output_bytes = 1 << 20;
  const absl::StatusOr<std::string> doubling = RenderSource(
      "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}{{ ns.s }}",
      {}, limits);
  ASSERT_FALSE(doubling.ok());
  EXPECT_THAT(std::string(doubling.status().message()), HasSubstr("longer than 1048576 bytes"));
  const absl::StatusOr<std::string> text =
      RenderSource("{% for i in range(300000) %}0123456789{% endfor %}", {}, limits);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("longer than"));
  const absl::StatusOr<std::string> fits =
      RenderSource("{% for i in range(1000) %}0123456789{% endfor %}", {}, limits);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->size(), 10000u);
  // Built by one operation before the limit sees it: printing a value whose
  // parts are shared (a 41-deep value that prints as 2^40 items), and a
  // replace() of a 1 MiB string's every character by 1 MiB. Each asked for
  // terabytes (std::bad_alloc, or the OOM killer).
  for (const std::string print : {"{{ ns.a }}", "{{ ns.a|tojson }}", "{{ '' ~ ns.a }}"}) {
    const absl::StatusOr<std::string> shared = RenderSource(
        "{% set ns = namespace(a=[1]) %}{% for i in range(40) %}{% set ns.a = [ns.a, ns.a] %}"
        "{% endfor %}" + print, {}, limits);
    ASSERT_FALSE(shared.ok()) << print;
    EXPECT_THAT(std::string(shared.status().message()), HasSubstr("MiB")) << print;
  }
  const absl::StatusOr<std::string> replaced = RenderSource(
      "{% set ns = namespace(s='x') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}{{ ns.s.replace('x', ns.s) }}",
      {}, Limits());
  ASSERT_FALSE(replaced.ok());
  EXPECT_THAT(std::string(replaced.status().message()), HasSubstr("replace() would build"));
}

TEST(JinjaRenderTest, WorkIsBounded) {
  Limits limits;
  limits.max_steps = 100000;
  const absl::StatusOr<std::string> loops = RenderSource(
      "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", {}, limits);
  ASSERT_FALSE(loops.ok());
  EXPECT_THAT(std::string(loops.status().message()), HasSubstr("more than 100000 steps"));
  const absl::StatusOr<std::string> range = RenderSource("{{ range(1000000000)|length }}", {}, limits);
  ASSERT_FALSE(range.ok());
  const absl::StatusOr<std::string> lists = RenderSource(
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}"
      "{% endfor %}{{ ns.l|length }}",
      {}, limits);
  ASSERT_FALSE(lists.ok());
}

TEST(JinjaRenderTest, ValueNestingIsBounded) {
  const absl::StatusOr<std::string> deep = RenderSource(
      "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}"
      "{% endfor %}{{ ns.x|length }}");
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(std::string(deep.status().message()), HasSubstr("nested more than 256 deep"));
  // Namespaces may chain and refer to themselves: freeing them must not
  // recurse (or leak).
  EXPECT_EQ(*RenderSource("{% set ns = namespace(x=none) %}{% for i in range(100000) %}"
                          "{% set ns = namespace(x=ns) %}{% endfor %}ok"),
            "ok");
  EXPECT_EQ(*RenderSource("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me.me is defined }}"),
            "true");
  EXPECT_FALSE(RenderSource("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}").ok());
}

TEST(JinjaRenderTest, ContextValuesConvertAsJavaScriptSeesThem) {
  // Whole floats are integers, integer-like keys come first.
  const nlohmann::ordered_json context = nlohmann::ordered_json::parse(
      R"({"x": 2.0, "y": 2.5, "d": {"b": 1, "10": 2, "a": 3, "2": 4}})");
  EXPECT_EQ(*RenderSource("{{ x }} {{ y }} {{ d|tojson }} {{ x is integer }}", context),
            R"(2 2.5 {"2": 4, "10": 2, "b": 1, "a": 3} true)");
  // Context names may not shadow the globals.
  EXPECT_FALSE(RenderSource("x", {{"range", 1}}).ok());
}

TEST(JinjaJsTest, NumbersPrintAsJavaScriptPrintsThem) {
  using jinja::JsNumberToString;
  EXPECT_EQ(JsNumberToString(0), "0");
  EXPECT_EQ(JsNumberToString(-0.0), "0");
  EXPECT_EQ(JsNumberToString(1e21), "1e+21");
  EXPECT_EQ(JsNumberToString(1e20), "100000000000000000000");
  EXPECT_EQ(JsNumberToString(5e-7), "5e-7");
  EXPECT_EQ(JsNumberToString(0.000001), "0.000001");
  EXPECT_EQ(JsNumberToString(1.23e-18), "1.23e-18");
  EXPECT_EQ(JsNumberToString(-1.5), "-1.5");
  EXPECT_EQ(JsNumberToString(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(JsNumberToString(1.0 / 0.0), "Infinity");
  EXPECT_EQ(jinja::JsToFixed1(3), "3.0");
  EXPECT_EQ(jinja::JsStringToNumber(" 0x1f "), 31);
  EXPECT_EQ(jinja::JsParseInt("  -42abc"), -42);
  EXPECT_EQ(jinja::JsParseFloat(".5e1x"), 5);
  EXPECT_EQ(jinja::JsToLower("ΣΑΣ Σ ΑΣ."), "σας σ ας.");
  EXPECT_EQ(jinja::JsToUpper("ﬁ ß ŉ"), "FI SS ʼN");
}

TEST(JinjaChatTemplateTest, CreateRejectsATemplateItCannotParse) {
  const absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> chat = JinjaChatTemplate::Create(
      "{% for m in messages %}\n{{ m.content | regex_replace('a', 'b') }}{% endfor %}", "", "", {});
  ASSERT_FALSE(chat.ok());
  EXPECT_EQ(chat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(chat.status().message()),
              AllOf(HasSubstr("line 2"), HasSubstr("regex_replace")));
}

TEST(JinjaChatTemplateTest, CreateRejectsATemplateThatCannotRenderAConversation) {
  const absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> chat = JinjaChatTemplate::Create(
      "{% for m in messages %}{{ m.content + m.tokens }}{% endfor %}", "", "", {});
  ASSERT_FALSE(chat.ok());
  EXPECT_THAT(std::string(chat.status().message()), HasSubstr("fails to render"));
  // A template that refuses a system message still starts: users can send
  // conversations without one.
  const absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> no_system = JinjaChatTemplate::Create(
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
      "<s>", "</s>", {"\nuser:"});
  ASSERT_TRUE(no_system.ok()) << no_system.status();
  EXPECT_EQ(*(*no_system)->Render({{"user", "Hi"}}), "user: Hi\n");
  const absl::StatusOr<std::string> refused = (*no_system)->Render({{"system", "S"}, {"user", "Hi"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "System role not supported");
  EXPECT_THAT((*no_system)->stop_strings(), ::testing::ElementsAre("\nuser:"));
}

TEST(JinjaChatTemplateTest, RendersFromManyThreads) {
  const nlohmann::ordered_json& data = Cases();
  const absl::StatusOr<std::unique_ptr<JinjaChatTemplate>> chat = JinjaChatTemplate::Create(
      data["templates"]["qwen3"].get<std::string>(), "", "<|im_end|>", {"<|im_end|>"});
  ASSERT_TRUE(chat.ok()) << chat.status();
  const std::vector<ChatMessage> messages = {
      {"system", "S"}, {"user", "Q"}, {"assistant", "<think>\nhm\n</think>\n\nA"}, {"user", "Q2"}};
  const std::string expected = *(*chat)->Render(messages);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const absl::StatusOr<std::string> out = (*chat)->Render(messages);
        if (!out.ok() || *out != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace tandem
