#ifndef KSCORE_COMMON_STATUS_MACROS_H_
#define KSCORE_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// KSCORE_RETURN_IF_ERROR(expr): returns the absl::Status `expr` if not OK.
#define KSCORE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status kscore_status_ = (expr);          \
    if (!kscore_status_.ok()) return kscore_status_; \
  } while (0)

// KSCORE_ASSIGN_OR_RETURN(lhs, expr[, convert]): evaluates the
// absl::StatusOr `expr`; when OK, moves its value into `lhs` (a declaration
// such as `auto x` or an existing lvalue); else returns its status, or
// convert(status) when a converter is given (e.g. common::ToGrpcStatus).
#define KSCORE_ASSIGN_OR_RETURN(...)                                     \
  KSCORE_ASSIGN_OR_RETURN_PICK_(__VA_ARGS__, KSCORE_ASSIGN_OR_RETURN_3_, \
                                KSCORE_ASSIGN_OR_RETURN_2_, )            \
  (__VA_ARGS__)

#define KSCORE_ASSIGN_OR_RETURN_PICK_(a, b, c, name, ...) name
#define KSCORE_ASSIGN_OR_RETURN_2_(lhs, expr) \
  KSCORE_ASSIGN_OR_RETURN_3_(lhs, expr, ::std::move)
#define KSCORE_ASSIGN_OR_RETURN_3_(lhs, expr, convert)                       \
  KSCORE_ASSIGN_OR_RETURN_IMPL_(KSCORE_STATUS_CONCAT_(kscore_or_, __LINE__), \
                                lhs, expr, convert)
#define KSCORE_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr, convert) \
  auto var = (expr);                                           \
  if (!var.ok()) return convert(var.status());                 \
  lhs = *std::move(var)
#define KSCORE_STATUS_CONCAT_(a, b) KSCORE_STATUS_CONCAT_INNER_(a, b)
#define KSCORE_STATUS_CONCAT_INNER_(a, b) a##b

#endif  // KSCORE_COMMON_STATUS_MACROS_H_
