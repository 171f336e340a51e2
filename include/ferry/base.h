/// \file ferry/base.h
/// Compiler helpers shared by every C++ header: branch hints, forced-unwind rethrow, token pasting.
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

/// Debug-only invariant check, for invariants whose violation would otherwise corrupt memory
/// silently (a reference count on destruction, a type index out of its range). Without NDEBUG
/// (Debug builds, such as the sanitizer build of scripts/test.sh) a false `cond` prints the
/// condition and its place and aborts; with NDEBUG (release) it is compiled out: `cond` is not
/// evaluated. Checks that must hold in release builds use FERRY_ICHECK (ferry/error.h).
///
///     FERRY_DCHECK(header->ref_counter <= 1);
#ifndef NDEBUG
#define FERRY_DCHECK(cond) \
  (FERRY_LIKELY(cond) ? (void)0 : ::ferry::details::DCheckFailed(#cond, __FILE__, __LINE__))
#else
#define FERRY_DCHECK(cond) ((void)sizeof((cond) ? 1 : 0))
#endif

namespace ferry {
namespace details {
/// Rethrows the exception being handled if it is thread cancellation; call only in a catch block.
FERRY_DLL void RethrowIfForcedUnwind();
/// FERRY_DCHECK's failure: prints "file:line: FERRY_DCHECK failed: cond" to stderr and aborts.
[[noreturn]] FERRY_DLL void DCheckFailed(const char* cond, const char* file, int line) noexcept;
}  // namespace details
}  // namespace ferry

#if defined(__GNUC__) || defined(__clang__)
#define FERRY_LIKELY(x) __builtin_expect(!!(x), 1)
#define FERRY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FERRY_LIKELY(x) (x)
#define FERRY_UNLIKELY(x) (x)
#endif
// Inlining and cold-path hints are written as standard attributes, `[[gnu::noinline]]`,
// `[[gnu::always_inline]]`, `[[gnu::cold]]`: GCC and clang read them, other compilers ignore an
// attribute namespace they do not know, so no macro is needed.

/// Joins two tokens after expanding them; used to make unique static names.
#define FERRY_STR_CONCAT_(a, b) a##b
#define FERRY_STR_CONCAT(a, b) FERRY_STR_CONCAT_(a, b)

#endif  // FERRY_BASE_H_
