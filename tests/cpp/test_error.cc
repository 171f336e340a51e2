// Tests of ferry/error.h: the throw and check macros, error kinds and backtraces, and the
// per-thread raised error of the C ABI.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>  // offsetof
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

// The ABI of the frame record (FerryErrorGetFrames).
static_assert(offsetof(FerryErrorFrame, function) == 0);
static_assert(offsetof(FerryErrorFrame, file) == 8);
static_assert(offsetof(FerryErrorFrame, line) == 16);
static_assert(offsetof(FerryErrorFrame, library) == 24);
static_assert(offsetof(FerryErrorFrame, address) == 32);
static_assert(sizeof(FerryErrorFrame) == 40);

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
    EXPECT_NE(e.backtrace().view().find("test_error.cc"), std::string_view::npos) << e.backtrace();
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

// Backtraces: raw at the throw, symbolized on demand, with names of static functions and
// lambdas and their file:line (this test is built with debug information).

int throw_line = 0;

[[gnu::noinline]] static void ThrowFromStatic() {
  throw_line = __LINE__ + 1;
  FERRY_THROW(ValueError) << "static";
}

std::vector<FerryErrorFrame> FramesOf(const Error& e) {
  const FerryErrorFrame* frames = nullptr;
  int32_t n = -1;
  EXPECT_EQ(FerryErrorGetFrames(ferry::details::ObjectUnsafe::GetHeader(e.get()), &frames, &n), 0);
  return std::vector<FerryErrorFrame>(frames, frames + n);
}

bool EndsWith(const char* s, const char* suffix) {
  const size_t n = std::strlen(s), m = std::strlen(suffix);
  return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

TEST(ErrorBacktrace, FramesNameAStaticFunctionWithFileAndLine) {
  try {
    ThrowFromStatic();
    FAIL();
  } catch (const Error& e) {
    std::vector<FerryErrorFrame> frames = FramesOf(e);
    ASSERT_FALSE(frames.empty());
    EXPECT_NE(std::strstr(frames[0].function, "ThrowFromStatic"), nullptr) << frames[0].function;
    EXPECT_TRUE(EndsWith(frames[0].file, "test_error.cc")) << frames[0].file;
    EXPECT_EQ(frames[0].line, throw_line);
    EXPECT_NE(frames[0].library[0], '\0');
    bool found_test = false;
    for (const FerryErrorFrame& f : frames) {
      found_test = found_test || std::strstr(f.function, "FramesNameAStaticFunction") != nullptr;
    }
    EXPECT_TRUE(found_test) << e.backtrace();
    const std::string text(e.backtrace());
    EXPECT_NE(text.find("ThrowFromStatic"), std::string::npos) << text;
    EXPECT_NE(text.find("test_error.cc:" + std::to_string(throw_line)), std::string::npos);
    EXPECT_EQ(text.find("ErrorBuilder"), std::string::npos) << text;
    EXPECT_EQ(e.backtrace().c_str(), e.backtrace().c_str()) << "made once, then kept";
  }
}

TEST(ErrorBacktrace, FramesNameALambda) {
  int line = 0;
  auto thrower = [&line](int x) {
    line = __LINE__ + 1;
    FERRY_THROW(KeyError) << "lambda " << x;
  };
  try {
    thrower(1);
    FAIL();
  } catch (const Error& e) {
    std::vector<FerryErrorFrame> frames = FramesOf(e);
    ASSERT_FALSE(frames.empty());
    EXPECT_TRUE(EndsWith(frames[0].file, "test_error.cc")) << frames[0].file;
    EXPECT_EQ(frames[0].line, line);
    EXPECT_NE(std::strstr(frames[0].function, "operator()"), nullptr) << frames[0].function;
  }
}

TEST(ErrorBacktrace, LeavesOutTheCallingMachinery) {
  // A lambda called through a typed Function: between this test and the lambda stood the
  // dispatch templates (PackedSafeCall, NamedTypedFunctionObj::CppCall, TypedCaller::Call,
  // CallTyped, Function::operator()): left out, as the throwing machinery is.
  ferry::Function f = ferry::Function::FromTyped(
      [](int64_t x) -> int64_t { FERRY_THROW(ValueError) << "typed " << x; }, "test.typed");
  try {
    f(1);
    FAIL();
  } catch (const Error& e) {
    std::vector<FerryErrorFrame> frames = FramesOf(e);
    ASSERT_FALSE(frames.empty());
    EXPECT_NE(std::strstr(frames[0].function, "operator()"), nullptr) << frames[0].function;
    bool found_test = false;
    for (const FerryErrorFrame& fr : frames) {
      found_test =
          found_test || std::strstr(fr.function, "LeavesOutTheCallingMachinery") != nullptr;
      EXPECT_FALSE(EndsWith(fr.file, "function.h") || EndsWith(fr.file, "function_traits.h"))
          << fr.function;
      EXPECT_EQ(std::strstr(fr.function, "PackedSafeCall"), nullptr) << fr.function;
      EXPECT_EQ(std::strstr(fr.function, "TypedCaller"), nullptr) << fr.function;
    }
    EXPECT_TRUE(found_test) << e.backtrace();
    const std::string text(e.backtrace());
    EXPECT_EQ(text.find("function_traits.h"), std::string::npos) << text;
    EXPECT_EQ(text.find(":0\n"), std::string::npos) << "no line rather than a wrong one: " << text;
  }
}

TEST(ErrorBacktrace, CreateCapturesOnlyWithoutAText) {
  FerryObjectHandle captured = nullptr, given = nullptr;
  ASSERT_EQ(FerryErrorCreate("ValueError", "m", nullptr, &captured), 0);
  ASSERT_EQ(FerryErrorCreate("ValueError", "m", "", &given), 0);
  const FerryErrorFrame* frames = nullptr;
  int32_t n = 0;
  ASSERT_EQ(FerryErrorGetFrames(captured, &frames, &n), 0);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::strstr(frames[0].function, "CreateCapturesOnlyWithoutAText"), nullptr)
      << frames[0].function;
  ASSERT_EQ(FerryErrorGetFrames(given, &frames, &n), 0);
  EXPECT_EQ(n, 0);
  const char* text = nullptr;
  ASSERT_EQ(FerryErrorGetInfo(given, nullptr, nullptr, &text), 0);
  EXPECT_STREQ(text, "");
  EXPECT_EQ(FerryErrorGetFrames(given, nullptr, &n), -1);  // NULL out argument: named
  FerryObjectHandle raised = nullptr;
  FerryErrorMoveFromRaised(&raised);
  ASSERT_NE(raised, nullptr);
  FerryObjectDecRef(raised);
  FerryObjectDecRef(captured);
  FerryObjectDecRef(given);
}

int formatted = 0;
char* FormatPayload(void* payload) {
  ++formatted;
  const char* text = static_cast<const char*>(payload);
  char* out = static_cast<char*>(std::malloc(std::strlen(text) + 1));
  std::strcpy(out, text);
  return out;
}

TEST(ErrorBacktrace, PayloadIsFormattedOnlyWhenTheTextIsRead) {
  static const char kPayload[] = "  the other language's frames\n";
  FerryObjectHandle error = nullptr;
  ASSERT_EQ(FerryErrorCreate("KeyError", "m", nullptr, &error), 0);
  ASSERT_EQ(FerryErrorSetPayload(error, const_cast<char*>(kPayload), nullptr), 0);
  ASSERT_EQ(FerryErrorSetPayloadFormatter(error, &FormatPayload), 0);
  formatted = 0;
  FerryErrorSetRaised(error);
  FerryObjectDecRef(error);
  try {
    ferry::details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_EQ(formatted, 0);
    EXPECT_NE(e.backtrace().view().find("the other language's frames"), std::string_view::npos);
    EXPECT_NE(e.backtrace().view().find("PayloadIsFormattedOnly"), std::string_view::npos);
    (void)e.backtrace();
    EXPECT_EQ(formatted, 1);
  }
}

TEST(ErrorBacktrace, CaptureBacktraceNamesTheCaller) {
  const std::string text = ferry::details::CaptureBacktrace(0);
  EXPECT_NE(text.find("CaptureBacktraceNamesTheCaller"), std::string::npos) << text;
}

TEST(ErrorKinds, OneBuiltinList) {
  const char* const* kinds = FerryErrorBuiltinKinds();
  EXPECT_EQ(kinds, ferry::details::BuiltinErrorKinds());
  std::vector<std::string> names;
  for (const char* const* k = kinds; *k != nullptr; ++k) names.emplace_back(*k);
  for (const char* expected :
       {"ValueError", "TypeError", "KeyError", "IndexError", "AttributeError",
        "NotImplementedError", "RuntimeError", "MemoryError", "OverflowError", "ZeroDivisionError",
        "InternalError"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
}

}  // namespace
