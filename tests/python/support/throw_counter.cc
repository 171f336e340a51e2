// Preloaded (LD_PRELOAD) into a test's subprocess: counts the C++ exceptions thrown in the
// process, by wrapping the C++ runtime's __cxa_throw. The test reads the count through
// ferry_test_throw_count() (ctypes.CDLL(None)); used to show that importing ferry throws none.
// __cxa_rethrow too (ferry_test_rethrow_count()): an error crossing the C ABI is thrown once and
// caught by type, never rethrown to be sorted (each rethrow unwinds again).
#include <dlfcn.h>

#include <atomic>

namespace {
std::atomic<long> g_throws{0};
std::atomic<long> g_rethrows{0};
using ThrowFn = void (*)(void*, void*, void (*)(void*));
using RethrowFn = void (*)();
}  // namespace

extern "C" {

long ferry_test_throw_count() { return g_throws.load(); }
long ferry_test_rethrow_count() { return g_rethrows.load(); }

[[noreturn]] void __cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  g_throws.fetch_add(1);
  static const ThrowFn real = reinterpret_cast<ThrowFn>(dlsym(RTLD_NEXT, "__cxa_throw"));
  real(object, type, destroy);
  __builtin_unreachable();
}

[[noreturn]] void __cxa_rethrow() {
  g_rethrows.fetch_add(1);
  static const RethrowFn real = reinterpret_cast<RethrowFn>(dlsym(RTLD_NEXT, "__cxa_rethrow"));
  real();
  __builtin_unreachable();
}

}  // extern "C"
