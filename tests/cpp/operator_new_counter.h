// Replaces the global operator new of the test program that includes it (once, in one file) with
// one that counts this thread's calls, so a test can show what allocates and what does not.
#ifndef FERRY_TESTS_CPP_OPERATOR_NEW_COUNTER_H_
#define FERRY_TESTS_CPP_OPERATOR_NEW_COUNTER_H_

#include <cstdint>
#include <cstdlib>
#include <new>

thread_local int64_t t_operator_new_calls = 0;

// GCC cannot see that these replacements pair malloc with free: silence its guess.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  ++t_operator_new_calls;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

#endif  // FERRY_TESTS_CPP_OPERATOR_NEW_COUNTER_H_
