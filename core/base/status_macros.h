// Early-return helpers for absl::Status / absl::StatusOr.
#ifndef TANDEM_CORE_BASE_STATUS_MACROS_H_
#define TANDEM_CORE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TANDEM_CONCAT_INNER_(a, b) a##b
#define TANDEM_CONCAT_(a, b) TANDEM_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                       \
  do {                                              \
    const absl::Status tandem_status_ = (expr);     \
    if (!tandem_status_.ok()) return tandem_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F())`: declares x from F()'s value, or returns
// F()'s error status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(TANDEM_CONCAT_(tandem_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                           \
  if (!var.ok()) return var.status();          \
  lhs = std::move(var).value()

#endif  // TANDEM_CORE_BASE_STATUS_MACROS_H_
