// Tests of ferry/error.h: the throw and check macros, error kinds and backtraces, and the
// per-thread raised error of the C ABI.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace {

using ferry::Error;

int Positive(int n) {
  FERRY_CHECK(n > 0) << "n must be positive, got " << n;
  return n;
}

TEST(Error, ThrowCarriesKindMessageAndBacktrace) {
  try {
    FERRY_THROW(ValueError) << "bad value " << 42;
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_EQ(e.message(), "bad value 42");
    EXPECT_STREQ(e.what(), "ValueError: bad value 42");
    EXPECT_NE(e.backtrace().view().find("test_error.cc"), std::string_view::npos)
        << e.backtrace();
    EXPECT_EQ(e->type_index(), kFerryError);
  }
}

TEST(Error, IsAStdException) {
  try {
    FERRY_THROW(KeyError) << "missing";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "KeyError: missing");
  }
}

TEST(Error, CheckThrowsOnlyWhenFalse) {
  EXPECT_EQ(Positive(3), 3);
  try {
    Positive(-1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_EQ(e.message(), "Check failed: (n > 0) is false: n must be positive, got -1");
  }
}

TEST(Error, ICheckIsAnInternalError) {
  try {
    FERRY_ICHECK(1 + 1 == 3) << "arithmetic";
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "InternalError");
    EXPECT_NE(e.message().view().find("(1 + 1 == 3)"), std::string_view::npos);
  }
}

TEST(Error, TravelsThroughTheCAbiPerThread) {
  FerryObjectHandle created = nullptr;
  ASSERT_EQ(FerryErrorCreate("IndexError", "out of range", "frame", &created), 0);
  FerryErrorSetRaised(created);
  FerryObjectDecRef(created);
  // Another thread has its own, empty, slot.
  std::thread([] {
    FerryObjectHandle other = reinterpret_cast<FerryObjectHandle>(1);
    FerryErrorMoveFromRaised(&other);
    EXPECT_EQ(other, nullptr);
  }).join();
  try {
    ferry::details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "IndexError");
    EXPECT_EQ(e.message(), "out of range");
    EXPECT_EQ(e.backtrace(), "frame");
  }
  FerryObjectHandle after = nullptr;
  FerryErrorMoveFromRaised(&after);
  EXPECT_EQ(after, nullptr) << "taking the error clears it";
}

TEST(Error, GetInfoRejectsNonErrors) {
  FerryObjectHandle str = nullptr;
  ASSERT_EQ(FerryStringCreate("x", 1, &str), 0);
  const char* kind = nullptr;
  EXPECT_EQ(FerryErrorGetInfo(str, &kind, nullptr, nullptr), -1);
  FerryObjectDecRef(str);
  try {
    ferry::details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(e.message().view().find("ferry.String"), std::string_view::npos);
  }
}

TEST(Error, NullArgumentsAreNamed) {
  EXPECT_EQ(FerryObjectIncRef(nullptr), -1);
  try {
    ferry::details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "ValueError");
    EXPECT_NE(e.message().view().find("'obj'"), std::string_view::npos) << e.what();
  }
  FerryErrorSetRaisedFromCStr("NotImplementedError", "later");
  try {
    ferry::details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "NotImplementedError");
  }
  // With nothing raised, rethrowing still reports a failure rather than succeeding.
  EXPECT_THROW(ferry::details::ThrowRaised(), Error);
}

}  // namespace
