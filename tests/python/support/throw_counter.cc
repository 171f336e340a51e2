// Preloaded (LD_PRELOAD) into a test's subprocess: counts the C++ exceptions thrown in the
// process, by wrapping the C++ runtime's __cxa_throw. The test reads the count through
// ferry_test_throw_count() (ctypes.CDLL(None)); used to show that importing ferry throws none.
#include <dlfcn.h>

#include <atomic>

namespace {
std::atomic<long> g_throws{0};
using ThrowFn = void (*)(void*, void*, void (*)(void*));
}  // namespace

extern "C" {

long ferry_test_throw_count() { return g_throws.load(); }

[[noreturn]] void __cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  g_throws.fetch_add(1);
  static const ThrowFn real = reinterpret_cast<ThrowFn>(dlsym(RTLD_NEXT, "__cxa_throw"));
  real(object, type, destroy);
  __builtin_unreachable();
}

}  // extern "C"
