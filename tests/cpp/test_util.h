// Helpers shared by the C++ tests.
#ifndef FERRY_TESTS_CPP_TEST_UTIL_H_
#define FERRY_TESTS_CPP_TEST_UTIL_H_

#include <ferry/error.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>

namespace ferry_test {

// Expects `f()` to throw a ferry::Error of `kind` whose message contains every one of `parts`.
template <typename F>
void ExpectError(F&& f, const char* kind, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "expected " << kind;
  } catch (const ferry::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const char* part : parts) {
      EXPECT_NE(e.message().view().find(part), std::string_view::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

}  // namespace ferry_test

#endif  // FERRY_TESTS_CPP_TEST_UTIL_H_
