// ValidateProgram: the checks that need the whole parsed tree (see
// jinja_validator.h).
#include "core/text/jinja/jinja_validator.h"

#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/text/jinja/jinja_builtins.h"

namespace tandem::jinja {
namespace {

// The checks that need the whole tree: what is called, and macros.
class Validator {
 public:
  absl::Status Run(const NodeList& program) {
    for (const NodePtr& n : program) CollectNames(n.get());
    for (const NodePtr& n : program) RETURN_IF_ERROR(Check(n.get(), nullptr));
    return absl::OkStatus();
  }

 private:
  void Declare(const Node* target) {
    if (target == nullptr) return;
    if (target->kind == NodeKind::kIdentifier) assigned_.insert(target->text);
    if (target->kind == NodeKind::kTuple) {
      for (const NodePtr& item : target->args) Declare(item.get());
    }
  }

  void CollectNames(const Node* n) {
    if (n == nullptr) return;
    switch (n->kind) {
      case NodeKind::kSet: Declare(n->arg(0)); break;
      case NodeKind::kFor: Declare(n->arg(0)); break;
      case NodeKind::kMacro:
        assigned_.insert(n->text);
        for (const NodePtr& p : n->args) {
          assigned_.insert(p->text);
        }
        break;
      default: break;
    }
    for (const NodePtr& c : n->args) CollectNames(c.get());
    for (const NodePtr& c : n->body) CollectNames(c.get());
    for (const NodePtr& c : n->alternate) CollectNames(c.get());
  }

  static absl::Status ErrorAt(int line, std::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", std::string(message)));
  }

  absl::Status Check(const Node* n, const Node* macro) {
    if (n == nullptr) return absl::OkStatus();
    switch (n->kind) {
      case NodeKind::kMacro:
        macro = n;
        break;
      case NodeKind::kIdentifier:
        if (macro != nullptr && (n->text == "varargs" || n->text == "kwargs")) {
          bool declared = false;
          for (const NodePtr& p : macro->args) declared |= p->text == n->text;
          if (!declared) {
            return ErrorAt(n->line, absl::StrCat("macro ", macro->text, " reads `", n->text,
                                                 "`: varargs and kwargs are not supported"));
          }
        }
        break;
      case NodeKind::kCall: {
        const Node* callee = n->arg(0);
        if (callee->kind == NodeKind::kIdentifier && !IsGlobalFunction(callee->text) &&
            !assigned_.contains(callee->text)) {
          return ErrorAt(n->line, absl::StrCat("unknown function `", callee->text, "()`"));
        }
        if (callee->kind == NodeKind::kMember && !callee->flag &&
            callee->arg(1)->kind == NodeKind::kIdentifier &&
            !IsKnownMethod(callee->arg(1)->text)) {
          return ErrorAt(n->line, absl::StrCat("unsupported method `.", callee->arg(1)->text,
                                               "()`"));
        }
        break;
      }
      default:
        break;
    }
    for (const NodePtr& c : n->args) RETURN_IF_ERROR(Check(c.get(), macro));
    for (const NodePtr& c : n->body) RETURN_IF_ERROR(Check(c.get(), macro));
    for (const NodePtr& c : n->alternate) RETURN_IF_ERROR(Check(c.get(), macro));
    return absl::OkStatus();
  }

  absl::flat_hash_set<std::string> assigned_;
};

}  // namespace

absl::Status ValidateProgram(const NodeList& program) { return Validator().Run(program); }

}  // namespace tandem::jinja
