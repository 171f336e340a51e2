/// \file leak_check.cc
/// The leak check: with FERRY_LEAK_CHECK=1 every object made and freed is counted by type index
/// (details::LeakCheckCount, inline in the allocators and deleters), and at exit the objects
/// still alive are printed by type key and the process exits with status 1.
///
/// "Alive at exit" means: after the program's own teardown (Python's finalization, the static
/// destructors of the executable and of every library loaded after libferry) and after Ferry's
/// own registries dropped what they hold (the global function table; each frontend's reporter
/// drops its caches). What is left then is owned by nothing that will ever free it.
#include <cinttypes>  // PRId64
#include <cstdio>     // the report
#include <cstdlib>    // getenv, calloc, atexit, _Exit
#include <cstring>    // strcmp
#include <mutex>
#include <vector>

#include "c_api_internal.h"
#include "ferry/object.h"
#include "leak_check_internal.h"

namespace ferry {
namespace details {

int64_t* leak_check_counts = nullptr;

namespace {

std::mutex& ReportersMutex() {
  static std::mutex* mutex = new std::mutex();  // never destroyed: used at exit
  return *mutex;
}

std::vector<FerryLeakCheckReporter>& Reporters() {
  static auto* reporters = new std::vector<FerryLeakCheckReporter>();  // never destroyed
  return *reporters;
}

/// The status of a process that leaked.
constexpr int kLeakExitStatus = 1;

void ReleaseRegistries() {
  ClearGlobalsForLeakCheck();
  ClearLibraryRecordsForLeakCheck();
  ClearFieldDefaultsForLeakCheck();
}

void Report() {
  ReleaseRegistries();
  std::vector<FerryLeakCheckReporter> reporters;
  {
    std::lock_guard<std::mutex> lock(ReportersMutex());
    reporters = Reporters();
  }
  int64_t leaks = 0;
  for (auto it = reporters.rbegin(); it != reporters.rend(); ++it) leaks += (*it)();
  int64_t* counts = leak_check_counts;
  int64_t objects = 0;
  bool header = false;
  for (int32_t index = 0; index < kTypeIndexLimit; ++index) {
    const int64_t count = __atomic_load_n(counts + index, __ATOMIC_RELAXED);
    if (count == 0) continue;
    if (!header) {
      std::fprintf(stderr, "ferry: leak check: Ferry objects alive at exit, by type key:\n");
      header = true;
    }
    if (count > 0) {
      std::fprintf(stderr, "ferry:   %8" PRId64 "  %s\n", count, TypeIndexToKey(index));
      objects += count;
    } else {
      // More frees than allocations: an allocator or deleter that skips the count.
      std::fprintf(stderr, "ferry:   %8" PRId64 "  %s (freed more often than made: a miscount)\n",
                   count, TypeIndexToKey(index));
      objects += -count;
    }
  }
  leaks += objects;
  if (leaks == 0) return;
  std::fprintf(stderr,
               "ferry: leak check failed: %" PRId64
               " leak(s) left at exit (FERRY_LEAK_CHECK=1); exiting with status %d\n",
               leaks, kLeakExitStatus);
  std::fflush(nullptr);
  std::_Exit(kLeakExitStatus);
}

/// Reads FERRY_LEAK_CHECK once, before any other initializer of libferry (and so before any
/// object exists): counting starts with the first object or not at all.
__attribute__((constructor(101))) void LeakCheckInit() {
  const char* value = std::getenv("FERRY_LEAK_CHECK");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "0") == 0) return;
  if (std::strcmp(value, "1") != 0) {
    std::fprintf(stderr,
                 "ferry: FERRY_LEAK_CHECK should be 1 (on) or 0 (off), got '%s'; the check is "
                 "on\n",
                 value);
  }
  auto* counts = static_cast<int64_t*>(std::calloc(kTypeIndexLimit, sizeof(int64_t)));
  if (counts == nullptr) {
    std::fprintf(stderr, "ferry: FERRY_LEAK_CHECK: out of memory; the check is off\n");
    return;
  }
  // Registered before any static object of libferry or of the libraries loaded after it
  // exists, so it runs after all of their destructors (and after Py_Finalize, which returns
  // before exit() runs these handlers).
  if (std::atexit(&Report) != 0) {
    std::free(counts);
    std::fprintf(stderr, "ferry: FERRY_LEAK_CHECK: atexit failed; the check is off\n");
    return;
  }
  leak_check_counts = counts;
}

}  // namespace
}  // namespace details
}  // namespace ferry

int FerryLeakCheckEnabled(int32_t* out_enabled) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_enabled);
  *out_enabled = ferry::details::leak_check_counts != nullptr ? 1 : 0;
  FERRY_C_API_END();
}

int FerryLeakCheckAddReporter(FerryLeakCheckReporter reporter) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(reporter);
  if (ferry::details::leak_check_counts == nullptr) return 0;
  std::lock_guard<std::mutex> lock(ferry::details::ReportersMutex());
  ferry::details::Reporters().push_back(reporter);
  FERRY_C_API_END();
}
