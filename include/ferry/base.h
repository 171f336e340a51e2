/// \file ferry/base.h
/// Compiler helpers shared by every C++ header: branch hints, inlining, the export macro.
#ifndef FERRY_BASE_H_
#define FERRY_BASE_H_

#include "ferry/c_api.h"

/// Call first in every `catch (...)` that does not rethrow: thread cancellation (pthread_cancel,
/// pthread_exit, CPython ending a thread that wants the GIL after the interpreter finalized)
/// unwinds with abi::__forced_unwind, which must reach the thread's start; a handler that
/// swallows it aborts the process ("FATAL: exception not rethrown").
///
///     try { ... } catch (...) { FERRY_RETHROW_FORCED_UNWIND(); ... }
#define FERRY_RETHROW_FORCED_UNWIND() ::ferry::details::RethrowIfForcedUnwind()

namespace ferry {
namespace details {
/// Rethrows the exception being handled if it is thread cancellation; call only in a catch block.
FERRY_DLL void RethrowIfForcedUnwind();
}  // namespace details
}  // namespace ferry

#if defined(__GNUC__) || defined(__clang__)
#define FERRY_LIKELY(x) __builtin_expect(!!(x), 1)
#define FERRY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FERRY_INLINE inline __attribute__((always_inline))
#define FERRY_NOINLINE __attribute__((noinline))
#else
#define FERRY_LIKELY(x) (x)
#define FERRY_UNLIKELY(x) (x)
#define FERRY_INLINE inline
#define FERRY_NOINLINE
#endif

/// Marks code after a FERRY_THROW statement as unreachable, for [[noreturn]] functions.
#if defined(__GNUC__) || defined(__clang__)
#define FERRY_UNREACHABLE() __builtin_unreachable()
#else
#define FERRY_UNREACHABLE() abort()
#endif

/// Joins two tokens after expanding them; used to make unique static names.
#define FERRY_STR_CONCAT_(a, b) a##b
#define FERRY_STR_CONCAT(a, b) FERRY_STR_CONCAT_(a, b)

#endif  // FERRY_BASE_H_
