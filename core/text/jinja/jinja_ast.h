// The syntax tree of a template: @huggingface/jinja's AST, as one node type
// whose fields each kind uses as listed below.
#ifndef TANDEM_CORE_TEXT_JINJA_JINJA_AST_H_
#define TANDEM_CORE_TEXT_JINJA_JINJA_AST_H_

#include <memory>
#include <string>
#include <vector>

namespace tandem::jinja {

enum class NodeKind {
  // Statements. A template is a list of statements and expressions; each
  // expression's value is printed.
  kText,         // text: the text
  kIf,           // args: test; body; alternate (else / elif chain)
  kFor,          // args: loop variable (identifier or tuple), iterable, filter
                 // condition or null; body; alternate: the else block
  kSet,          // args: target, value or null; body: the block of a block set
  kMacro,        // text: name; args: parameters (identifiers, keyword
                 // arguments for defaults); body
  kFilterBlock,  // args: a kFilter whose operand is null; body
  kBreak,
  kContinue,
  // Expressions.
  kInteger,     // number
  kFloat,       // number
  kString,      // text
  kIdentifier,  // text
  kArray,       // args: items
  kTuple,       // args: items
  kObject,      // args: key, value, key, value, ...
  kMember,      // args: object, property (kSlice when sliced); flag: computed
                // (obj[x]), else obj.name / obj.0
  kSlice,       // args: start, stop, step (each may be null)
  kCall,        // args: callee, then the arguments
  kKeywordArg,  // text: name; args: value
  kSpread,      // *x in a call; args: x
  kKwSpread,    // **x in a call; args: x
  kUnary,       // text: "not", "-" or "+"; args: operand
  kBinary,      // text: operator; args: left, right
  kFilter,      // text: filter name; args: operand, then the call arguments;
                // flag: called with parentheses
  kTest,        // text: test name; args: operand; flag: negated (is not)
  kSelect,      // `x if c` without else: args: x, c
  kTernary,     // `x if c else y`: args: c, x, y
};

struct Node {
  NodeKind kind;
  int line = 0;
  std::string text;
  double number = 0;
  bool flag = false;
  std::vector<std::unique_ptr<Node>> args;
  std::vector<std::unique_ptr<Node>> body;
  std::vector<std::unique_ptr<Node>> alternate;

  Node(NodeKind k, int l) : kind(k), line(l) {}
  // Frees the subtree without recursing on its depth (a long chain of
  // operators is as deep as it is long).
  ~Node() {
    std::vector<std::unique_ptr<Node>> pending;
    auto take = [&pending](std::vector<std::unique_ptr<Node>>& from) {
      for (std::unique_ptr<Node>& child : from) {
        if (child) pending.push_back(std::move(child));
      }
      from.clear();
    };
    take(args);
    take(body);
    take(alternate);
    while (!pending.empty()) {
      std::unique_ptr<Node> next = std::move(pending.back());
      pending.pop_back();
      take(next->args);
      take(next->body);
      take(next->alternate);
    }  // each `next` is destroyed with no children
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  const Node* arg(size_t i) const { return i < args.size() ? args[i].get() : nullptr; }
};

using NodePtr = std::unique_ptr<Node>;
using NodeList = std::vector<NodePtr>;

}  // namespace tandem::jinja

#endif  // TANDEM_CORE_TEXT_JINJA_JINJA_AST_H_
