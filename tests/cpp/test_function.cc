// Tests of ferry/function.h: packed and typed functions, the global registry, errors through the
// C ABI, functions made from C callbacks, and loading libraries.
#include <ferry/ferry.h>
#include <gtest/gtest.h>
#include <pthread.h>  // pthread_cancel
#include <stdlib.h>   // getenv, unsetenv: the ABI test module's trace
#include <unistd.h>   // pipe, read: a cancellation point that blocks

#include <atomic>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <type_traits>  // is_trivially_destructible_v
#include <vector>

#include "test_util.h"

namespace {

using namespace ferry;
using ferry_test::ExpectError;

FERRY_REGISTER_GLOBAL("testing.add").set_body_typed([](int64_t a, int64_t b) { return a + b; });
FERRY_REGISTER_GLOBAL("testing.taken").set_body_typed([]() { return 1; });
FERRY_REGISTER_GLOBAL("testing.packed_count").set_body([](const AnyView*, int32_t n, Any* rv) {
  *rv = n;
});
FERRY_REGISTER_GLOBAL("testing.quick_before").quick().set_body_typed([]() { return 1; });
FERRY_REGISTER_GLOBAL("testing.quick_after").set_body_typed([]() { return 2; }).quick();
FERRY_REGISTER_GLOBAL("testing.throw_int").set_body_typed([]() -> int { throw 42; });
FERRY_REGISTER_GLOBAL("testing.throw_bad_alloc").set_body_typed([]() -> int {
  throw std::bad_alloc();
});
FERRY_REGISTER_GLOBAL("testing.throw_value_error").set_body_typed([](String what) -> int {
  FERRY_THROW(ValueError) << "bad: " << what;
});

template <typename F>
Error CaptureError(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error";
  return Error("None", "no error");
}

bool Contains(const String& haystack, const char* needle) {
  return haystack.view().find(needle) != std::string_view::npos;
}

// A function made by FromTyped without a name holds only its callable: with a trivially
// destructible callable its object is freed on the fast path (no destructor to run).
static_assert(std::is_trivially_destructible_v<FunctionObj>);

TEST(FromTyped, WithoutANameHasNoParamNamesAndCallsItselfAnonymous) {
  Function f = Function::FromTyped([](int64_t a) { return a + 1; });
  EXPECT_TRUE(f->param_names.empty());
  EXPECT_EQ(f(int64_t{2}).cast<int64_t>(), 3);
  Error e = CaptureError([&] { f("no"); });
  EXPECT_NE(e.message().view().find("<anonymous>(0: int) -> int"), std::string_view::npos)
      << e.message();
  Function named =
      Function::FromTyped([](int64_t a, int64_t b) { return a * b; }, "mul", {"a", "b"});
  ASSERT_EQ(named->param_names.size(), 2u);
  EXPECT_EQ(named->param_names[1], "b");
  EXPECT_EQ(std::vector<std::string>(named->param_names.begin(), named->param_names.end()),
            (std::vector<std::string>{"a", "b"}));
  e = CaptureError([&] { named(int64_t{1}); });
  EXPECT_NE(e.message().view().find("mul() takes 2 arguments"), std::string_view::npos)
      << e.message();
}

TEST(Function, PackedCall) {
  Function f = Function::FromPacked([](const AnyView* args, int32_t n, Any* rv) {
    int64_t sum = 0;
    for (int32_t i = 0; i < n; ++i) sum += args[i].cast<int64_t>();
    *rv = sum;
  });
  EXPECT_EQ(f(1, 2, 3).cast<int64_t>(), 6);
  EXPECT_EQ(f().cast<int64_t>(), 0);
  EXPECT_EQ(f->type_index(), kFerryFunction);
}

TEST(Function, TypedCallConvertsArgumentsAndResult) {
  Function concat = Function::FromTyped(
      [](const String& a, std::string b, int64_t n) { return a + b + std::to_string(n); },
      "concat");
  EXPECT_EQ(concat("ab", std::string("cd"), 7).cast<String>(), "abcd7");
  Function scale = Function::FromTyped([](double x, int32_t k) { return x * k; });
  EXPECT_DOUBLE_EQ(scale(1.5, 2).cast<double>(), 3.0);
  Function nothing = Function::FromTyped([](int64_t) {});
  EXPECT_TRUE(nothing(1).is_none());
  Function any_arg =
      Function::FromTyped([](Any a, AnyView v) { return a.type_index() * 100 + v.type_index(); });
  EXPECT_EQ(any_arg(1, 2.0).cast<int64_t>(), kFerryInt * 100 + kFerryFloat);
}

int64_t Triple(int64_t x) { return 3 * x; }

TEST(Function, TypedFromFunctionPointer) {
  Function f = Function::FromTyped(&Triple, "triple");
  EXPECT_EQ(f(5).cast<int64_t>(), 15);
}

TEST(Function, WrongArgumentTypeNamesFunctionIndexAndTypes) {
  Function f = Function::FromTyped([](int64_t, const String&) { return 0; }, "my_func");
  Error e = CaptureError([&] { f(1, 2); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument 1 when calling `my_func(0: int, 1: ferry.String) -> "
            "int32`: expected ferry.String but got int");
  Error overflow = CaptureError([&] { Function::FromTyped([](int8_t) {}, "narrow")(1000); });
  EXPECT_EQ(overflow.kind(), "OverflowError");
  EXPECT_TRUE(Contains(overflow.message(), "narrow")) << overflow.what();
  EXPECT_TRUE(Contains(overflow.message(), "1000")) << overflow.what();
}

TEST(Function, WrongArgumentCountIsATypeError) {
  Function f = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add2");
  Error e = CaptureError([&] { f(1); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_TRUE(Contains(e.message(), "add2() takes 2 arguments but 1 were given")) << e.what();
  EXPECT_TRUE(Contains(e.message(), "add2(0: int, 1: int) -> int")) << e.what();
}

TEST(Function, TypedCallErrorMessagesAreExact) {
  // The errors are thrown out of line (function.h); their text must not lose anything.
  Function f = Function::FromTyped([](int64_t, const String&) { return 0; }, "my_func");
  Error e = CaptureError([&] { f("x", "y"); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument 0 when calling `my_func(0: int, 1: ferry.String) -> "
            "int32`: expected int but got ferry.String");
  e = CaptureError([&] { f(1); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "my_func() takes 2 arguments but 1 were given; signature `my_func(0: int, 1: "
            "ferry.String) -> int32`");
  e = CaptureError([&] { Function::FromTyped([]() {}, "noargs")(1, 2, 3); });
  EXPECT_EQ(e.message(),
            "noargs() takes 0 arguments but 3 were given; signature `noargs() -> None`");
  e = CaptureError([&] { Function::FromTyped([](int8_t) {}, "narrow")(1000); });
  EXPECT_EQ(e.kind(), "OverflowError");
  EXPECT_EQ(e.message(),
            "argument 0 of `narrow(0: int8) -> None`: integer 1000 is out of range for int8");
  e = CaptureError([&] { Function::FromTyped([](int64_t, uint32_t) {}, "unsigned")(1, -1); });
  EXPECT_EQ(e.kind(), "OverflowError");
  EXPECT_EQ(e.message(),
            "argument 1 of `unsigned(0: int, 1: uint32) -> None`: integer -1 is out of range for "
            "uint32");
  Function sum = Function::FromTyped([](Array<int64_t> a) { return a.size(); }, "sum");
  e = CaptureError([&] { sum(Array<Any>({Any(1), Any("s")})); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(),
            "Mismatched type on argument 0 when calling `sum(0: Array[int]) -> uint64`: expected "
            "Array[int] but got ferry.Array (element 1: expected int but got ferry.String)");
  // The result of a TypedFunction converts with the error of Any::cast.
  TypedFunction<int64_t()> wrong_result = Function::FromTyped([]() { return 2.5; });
  e = CaptureError([&] { wrong_result(); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "expected int but got float");
}

TEST(Function, CallPackedReplacesAnOldResult) {
  // cpp_call gets a result cell holding None; CallPacked gives it one even when the caller's
  // result holds a value, which may also be an argument (here the only reference to it).
  Any result = Function::FromTyped([]() { return 7; });
  AnyView arg = result;
  Function call = Function::FromTyped([](Function g) { return g().cast<int64_t>() + 1; });
  call.CallPacked(&arg, 1, &result);
  EXPECT_EQ(result.cast<int64_t>(), 8);
  Function payload = Function::FromTyped([]() { return 0; });
  result = payload;
  arg = result;
  Function wants_int = Function::FromTyped([](int64_t) {}, "wants_int");
  EXPECT_THROW(wants_int.CallPacked(&arg, 1, &result), Error);
  EXPECT_EQ(result.cast<Function>().get(), payload.get()) << "a failed call keeps the old value";
  Function identity = Function::FromTyped([](Function g) { return g; });
  identity.CallPacked(&arg, 1, &result);
  EXPECT_EQ(result.cast<Function>().get(), payload.get());
  EXPECT_EQ(payload.use_count(), 2) << "the old value is released once, the new one kept";
}

TEST(Function, TypedResultsOwnTheirValues) {
  Function payload = Function::FromTyped([]() { return 0; });
  Function as_object = Function::FromTyped([&payload]() { return payload; });
  Function as_any = Function::FromTyped([&payload]() { return Any(payload); });
  Function as_view = Function::FromTyped([](AnyView v) { return v; });
  {
    Any a = as_object();
    Any b = as_any();
    Any c = as_view(payload);
    EXPECT_EQ(payload.use_count(), 4);
    EXPECT_EQ(c.cast<Function>().get(), payload.get());
    Any text = Function::FromTyped([]() { return std::string(40, 'x'); })();
    EXPECT_EQ(text.cast<std::string>(), std::string(40, 'x'));
    Any none = Function::FromTyped([](int64_t) {})(1);
    EXPECT_TRUE(none.is_none());
    // A void call leaves the result as it arrived, None, also when it is reused.
    Any reused = payload;
    Function::FromTyped([]() {}).CallPacked(nullptr, 0, &reused);
    EXPECT_TRUE(reused.is_none());
  }
  EXPECT_EQ(payload.use_count(), 1);
  // Through the C ABI the result is owned by the caller.
  FerryObjectHandle handle = details::ObjectUnsafe::GetHeader(as_object.get());
  FerryAny out;
  ASSERT_EQ(FerryFunctionCall(handle, nullptr, 0, &out), 0);
  EXPECT_EQ(payload.use_count(), 2);
  ASSERT_EQ(FerryAnyRelease(&out), 0);
  EXPECT_EQ(payload.use_count(), 1);
}

TEST(Function, NestedFunctionsCallBack) {
  // apply(f, x) calls f(x) + 1: a Function passed as an argument and called back.
  Function apply =
      Function::FromTyped([](Function f, int64_t x) { return f(x).cast<int64_t>() + 1; });
  Function twice = Function::FromTyped([](int64_t x) { return 2 * x; });
  EXPECT_EQ(apply(twice, 20).cast<int64_t>(), 41);
  // A Function returned from a Function.
  Function make_adder = Function::FromTyped(
      [](int64_t k) { return Function::FromTyped([k](int64_t x) { return x + k; }); });
  Function add5 = make_adder(5).cast<Function>();
  EXPECT_EQ(add5(1).cast<int64_t>(), 6);
  // Errors from inside the callback come out of the outer call intact.
  Function failing =
      Function::FromTyped([](int64_t) -> int64_t { FERRY_THROW(IndexError) << "inner"; });
  Error e = CaptureError([&] { apply(failing, 1); });
  EXPECT_EQ(e.kind(), "IndexError");
  EXPECT_EQ(e.message(), "inner");
}

TEST(TypedFunction, WrapsAndUnwraps) {
  TypedFunction<int64_t(int64_t, int64_t)> add = *Function::GetGlobal("testing.add");
  EXPECT_EQ(add(2, 3), 5);
  TypedFunction<String(String)> shout([](String s) { return s + "!"; }, "shout");
  EXPECT_EQ(shout("hi"), "hi!");
  Function packed = shout;
  EXPECT_EQ(packed("a").cast<String>(), "a!");
  TypedFunction<void(int)> sink([](int) {});
  sink(1);
  EXPECT_TRUE(sink.defined());
  Any stored = shout;
  EXPECT_EQ(stored.cast<TypedFunction<String(String)>>()("b"), "b!");
}

TEST(Registry, GetSetRemoveList) {
  ASSERT_TRUE(Function::GetGlobal("testing.add").has_value());
  EXPECT_EQ((*Function::GetGlobal("testing.add"))(40, 2).cast<int64_t>(), 42);
  EXPECT_FALSE(Function::GetGlobal("testing.no_such").has_value());
  Error missing = CaptureError([] { Function::GetGlobalRequired("testing.no_such"); });
  EXPECT_EQ(missing.kind(), "KeyError");
  EXPECT_TRUE(Contains(missing.message(), "testing.no_such"));

  Function one = Function::FromTyped([] { return 1; });
  Function two = Function::FromTyped([] { return 2; });
  Function::SetGlobal("testing.set", one);
  Error dup = CaptureError([&] { Function::SetGlobal("testing.set", two); });
  EXPECT_EQ(dup.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(dup.message(), "'testing.set' is already registered")) << dup.what();
  EXPECT_EQ((*Function::GetGlobal("testing.set"))().cast<int>(), 1) << "the first one stays";
  Function::SetGlobal("testing.set", two, /*override=*/true);
  EXPECT_EQ((*Function::GetGlobal("testing.set"))().cast<int>(), 2);

  std::vector<String> names = ListGlobalNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), String("testing.set")), names.end());
  EXPECT_TRUE(RemoveGlobal("testing.set"));
  EXPECT_FALSE(RemoveGlobal("testing.set"));
  EXPECT_FALSE(Function::GetGlobal("testing.set").has_value());
  EXPECT_THROW(Function::SetGlobal("", one), Error);
  EXPECT_THROW(Function::SetGlobal("testing.null", Function()), Error);
}

TEST(Registry, AFunctionReleasedByTheRegistryMayUseTheRegistry) {
  // The last reference to a removed or replaced function goes after the registry's lock is
  // released, so its destructor (a frontend's finalizer, say) can look up globals.
  struct LooksUpOnRelease {
    explicit LooksUpOnRelease(int* count) : lookups(count) {}
    ~LooksUpOnRelease() {
      if (Function::GetGlobal("testing.add").has_value()) ++*lookups;
    }
    int* lookups;
  };
  int lookups = 0;
  auto make = [&lookups] {
    auto guard = std::make_shared<LooksUpOnRelease>(&lookups);
    return Function::FromPacked([guard](const AnyView*, int32_t, Any*) {});
  };
  Function::SetGlobal("testing.released", make());
  EXPECT_TRUE(RemoveGlobal("testing.released"));
  EXPECT_EQ(lookups, 1);
  Function::SetGlobal("testing.released", make());
  Function::SetGlobal("testing.released", make(), /*override=*/true);
  EXPECT_EQ(lookups, 2);
  EXPECT_TRUE(RemoveGlobal("testing.released"));
  EXPECT_EQ(lookups, 3);
}

TEST(Registry, StaticRegistrationFromAnotherTranslationUnitOrder) {
  // Registered by static initializers of this file before main; the registry is created on
  // first use, so the order of initialization across files does not matter.
  EXPECT_EQ((*Function::GetGlobal("testing.packed_count"))(1, 2, 3, 4).cast<int>(), 4);
}

TEST(Registry, ConcurrentRegistrationAndLookup) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &found] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string name = "testing.concurrent." + std::to_string(t) + "." + std::to_string(i);
        Function::SetGlobal(name, Function::FromTyped([t, i] { return t * 1000 + i; }));
        if (auto f = Function::GetGlobal(name); f && (*f)().cast<int>() == t * 1000 + i) ++found;
        if (auto add = Function::GetGlobal("testing.add")) (*add)(1, 2);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(found, kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      EXPECT_TRUE(
          RemoveGlobal("testing.concurrent." + std::to_string(t) + "." + std::to_string(i)));
    }
  }
}

// Calls a global through the C ABI with the given arguments and returns the rc and the error.
int CallThroughC(const char* name, const std::vector<Any>& args, Any* result) {
  FerryObjectHandle f = nullptr;
  EXPECT_EQ(FerryFunctionGetGlobal(name, &f), 0);
  EXPECT_NE(f, nullptr) << name;
  FerryAny out;
  int rc = FerryFunctionCall(f, reinterpret_cast<const FerryAny*>(args.data()),
                             static_cast<int32_t>(args.size()), &out);
  if (rc == 0) *result = Any::FromOwned(out);
  FerryObjectDecRef(f);
  return rc;
}

TEST(CAbi, CallReturnsOwnedResult) {
  Any result;
  ASSERT_EQ(CallThroughC("testing.add", {Any(20), Any(22)}, &result), 0);
  EXPECT_EQ(result.cast<int64_t>(), 42);
  FerryObjectHandle absent = reinterpret_cast<FerryObjectHandle>(1);
  ASSERT_EQ(FerryFunctionGetGlobal("testing.absent", &absent), 0);
  EXPECT_EQ(absent, nullptr);
}

TEST(CAbi, ErrorKindsSurviveTheRoundTrip) {
  Any result;
  ASSERT_EQ(CallThroughC("testing.throw_value_error", {Any("x")}, &result), -1);
  Error e = CaptureError([] { details::ThrowRaised(); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_EQ(e.message(), "bad: x");
  EXPECT_TRUE(Contains(e.backtrace(), "test_function.cc")) << e.backtrace();
  ASSERT_EQ(CallThroughC("testing.add", {Any("x"), Any(1)}, &result), -1);
  e = CaptureError([] { details::ThrowRaised(); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_TRUE(Contains(e.message(), "testing.add")) << e.what();
}

TEST(CAbi, NonStandardExceptionsBecomeErrors) {
  Any result;
  ASSERT_EQ(CallThroughC("testing.throw_int", {}, &result), -1);
  Error e = CaptureError([] { details::ThrowRaised(); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "unknown C++ exception")) << e.what();
  ASSERT_EQ(CallThroughC("testing.throw_bad_alloc", {}, &result), -1);
  e = CaptureError([] { details::ThrowRaised(); });
  EXPECT_EQ(e.kind(), "MemoryError");
  // Called from C++ directly, the original exception propagates.
  EXPECT_THROW((*Function::GetGlobal("testing.throw_int"))(), int);
}

TEST(CAbi, RejectsBadCalls) {
  Any result;
  FerryAny out;
  EXPECT_EQ(FerryFunctionCall(nullptr, nullptr, 0, &out), -1);
  EXPECT_EQ(CaptureError([] { details::ThrowRaised(); }).kind(), "ValueError");
  ObjectRef not_a_function = String("nope");
  FerryObjectHandle handle = const_cast<Object*>(not_a_function.get());
  EXPECT_EQ(FerryFunctionCall(handle, nullptr, 0, &out), -1);
  Error e = CaptureError([] { details::ThrowRaised(); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_TRUE(Contains(e.message(), "ferry.String"));
  EXPECT_EQ(FerryFunctionSetGlobal("testing.bad", handle, 0), -1);
  EXPECT_EQ(CaptureError([] { details::ThrowRaised(); }).kind(), "TypeError");
}

// A C callback with a resource: adds the resource's int to its argument.
struct Resource {
  int64_t offset;
  int* deleted;
};
int AddOffset(void* resource, const FerryAny* args, int32_t n, FerryAny* result) {
  if (n != 1 || args[0].type_index != kFerryInt) {
    FerryErrorSetRaisedFromCStr("TypeError", "add_offset wants one int");
    return -1;
  }
  result->type_index = kFerryInt;
  result->v_int64 = args[0].v_int64 + static_cast<Resource*>(resource)->offset;
  return 0;
}
void DeleteResource(void* resource) {
  Resource* r = static_cast<Resource*>(resource);
  ++*r->deleted;
  delete r;
}
int FailSilently(void*, const FerryAny*, int32_t, FerryAny*) { return -1; }

TEST(CAbi, FunctionsFromCCallbacks) {
  int deleted = 0;
  FerryObjectHandle handle = nullptr;
  ASSERT_EQ(FerryFunctionCreate(new Resource{100, &deleted}, AddOffset, DeleteResource, &handle),
            0);
  ASSERT_EQ(FerryFunctionSetGlobal("testing.c_callback", handle, 0), 0);
  FerryObjectDecRef(handle);
  Function f = Function::GetGlobalRequired("testing.c_callback");
  EXPECT_EQ(f(1).cast<int64_t>(), 101);
  Error e = CaptureError([&] { f("x"); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "add_offset wants one int");
  Any result;
  EXPECT_EQ(CallThroughC("testing.c_callback", {Any(2)}, &result), 0);
  EXPECT_EQ(result.cast<int64_t>(), 102);
  RemoveGlobal("testing.c_callback");
  EXPECT_EQ(deleted, 0) << "f still holds it";
  f = Function();
  EXPECT_EQ(deleted, 1) << "the resource is deleted with the last reference";

  ASSERT_EQ(FerryFunctionCreate(nullptr, FailSilently, nullptr, &handle), 0);
  Function silent(details::ObjectUnsafe::PtrFromOwned<Object>(
      details::ObjectUnsafe::FromHeader(static_cast<FerryObject*>(handle))));
  e = CaptureError([&] { silent(); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "without raising")) << e.what();
}

TEST(CAbi, ListGlobalNames) {
  int32_t count = 0;
  const char* const* names = nullptr;
  ASSERT_EQ(FerryFunctionListGlobalNames(&count, &names), 0);
  bool found = false;
  for (int32_t i = 0; i < count; ++i) found |= std::string(names[i]) == "testing.add";
  EXPECT_TRUE(found);
  int32_t removed = -1;
  ASSERT_EQ(FerryFunctionRemoveGlobal("testing.never", &removed), 0);
  EXPECT_EQ(removed, 0);
}

int32_t FlagsOf(const Function& f) {
  int32_t flags = -1;
  EXPECT_EQ(FerryFunctionGetFlags(const_cast<FunctionObj*>(f.get()), &flags), 0);
  return flags;
}

TEST(CAbi, QuickRegistrationsCarryTheirFlag) {
  EXPECT_EQ(FlagsOf(Function::GetGlobalRequired("testing.quick_before")), kFerryFunctionQuick);
  EXPECT_EQ(FlagsOf(Function::GetGlobalRequired("testing.quick_after")), kFerryFunctionQuick);
  EXPECT_EQ(FlagsOf(Function::GetGlobalRequired("testing.add")), 0) << "no flags by default";
  EXPECT_EQ(Function::GetGlobalRequired("testing.quick_after")().cast<int64_t>(), 2);
  // Every function Ferry itself registers returns promptly, so Python keeps the GIL for it.
  int ferry_globals = 0;
  for (const String& name : ListGlobalNames()) {
    if (name.view().substr(0, 6) != "ferry.") continue;
    ++ferry_globals;
    EXPECT_EQ(FlagsOf(Function::GetGlobalRequired(name.view())), kFerryFunctionQuick) << name;
  }
  EXPECT_GE(ferry_globals, 30);

  int32_t flags = 0;
  EXPECT_EQ(FerryFunctionGetFlags(nullptr, &flags), -1);
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  FerryObjectDecRef(error);
  ObjectRef not_a_function = String("x");
  EXPECT_EQ(FerryFunctionGetFlags(const_cast<Object*>(not_a_function.get()), &flags), -1);
  FerryErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  const char* kind = nullptr;
  const char* message = nullptr;
  ASSERT_EQ(FerryErrorGetInfo(error, &kind, &message, nullptr), 0);
  EXPECT_STREQ(kind, "TypeError");
  EXPECT_TRUE(Contains(message, "FerryFunctionGetFlags")) << message;
  FerryObjectDecRef(error);
}

const std::string kModuleDir = FERRY_TEST_MODULE_DIR;

TEST(LoadLibrary, RegistersGlobalsAndKeepsObjectsAlive) {
  LoadLibrary(kModuleDir + "/good_module.so");
  Function make = Function::GetGlobalRequired("testing.module.make_counter");
  ObjectRef counter = make(41).cast<ObjectRef>();
  EXPECT_STREQ(counter->GetTypeKey(), "testing.module.Counter");
  EXPECT_EQ(Function::GetGlobalRequired("testing.module.counter_value")(counter).cast<int64_t>(),
            41);
  EXPECT_EQ(Function::GetGlobalRequired("testing.module.add")(1, 2).cast<int64_t>(), 3);
  LoadLibrary(kModuleDir + "/good_module.so");  // loading twice is harmless
  Error e = CaptureError(
      [] { Function::GetGlobalRequired("testing.module.counter_value")(String("x")); });
  EXPECT_TRUE(Contains(e.message(), "expected a counter, got ferry.String")) << e.what();
}

TEST(LoadLibrary, MissingFileIsAClearError) {
  Error e = CaptureError([] { LoadLibrary(kModuleDir + "/no_such_module.so"); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "no_such_module.so")) << e.what();
  EXPECT_TRUE(Contains(e.message(), "no such file")) << e.what();
  EXPECT_EQ(FerryLibraryLoad("/nonexistent/lib.so"), -1);
  EXPECT_EQ(CaptureError([] { details::ThrowRaised(); }).kind(), "RuntimeError");
}

TEST(LoadLibrary, BrokenLibraryIsAClearError) {
  Error e = CaptureError([] { LoadLibrary(kModuleDir + "/broken_module.so"); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "broken_module.so")) << e.what();
  EXPECT_TRUE(Contains(e.message(), "ferry_test_symbol_that_does_not_exist")) << e.what();
}

// The ABI guard (ferry/details/abi_record.h): the two refused libraries are abi_module.cc built
// against copies of include/ with another ABI version and with another FunctionObj layout.
TEST(LoadLibrary, RefusesALibraryOfAnotherAbiBeforeAnyOfItRuns) {
  unsetenv("FERRY_TEST_ABI_MODULE_RAN");
  for (const char* variant : {"abi_bumped_module.so", "abi_layout_module.so"}) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // refused again, the same way
      Error e = CaptureError([variant] { LoadLibrary(kModuleDir + "/" + variant); });
      EXPECT_EQ(e.kind(), "RuntimeError");
      EXPECT_TRUE(Contains(e.message(), variant)) << e.what();
      EXPECT_TRUE(Contains(
          e.message(),
          ("running libferry is ABI version " + std::to_string(FERRY_ABI_VERSION)).c_str()))
          << e.what();
      EXPECT_TRUE(Contains(e.message(), "rebuild it")) << e.what();
      EXPECT_EQ(getenv("FERRY_TEST_ABI_MODULE_RAN"), nullptr) << "its initializer ran";
      EXPECT_FALSE(Function::GetGlobal("testing.abi.version").has_value());
    }
  }
  Error bumped = CaptureError([] { LoadLibrary(kModuleDir + "/abi_bumped_module.so"); });
  const std::string bumped_text =
      "ABI version " + std::to_string(FERRY_ABI_VERSION + 1) + " (layout fingerprint";
  EXPECT_TRUE(Contains(bumped.message(), bumped_text.c_str())) << bumped.what();
  // Same version, another FunctionObj: the fingerprints differ.
  Error layout = CaptureError([] { LoadLibrary(kModuleDir + "/abi_layout_module.so"); });
  const std::string layout_text =
      "headers of ABI version " + std::to_string(FERRY_ABI_VERSION) + " (layout fingerprint";
  EXPECT_TRUE(Contains(layout.message(), layout_text.c_str())) << layout.what();
  const char* problem = nullptr;
  ASSERT_EQ(FerryLibraryAbiMismatch((kModuleDir + "/abi_layout_module.so").c_str(), &problem), 0);
  ASSERT_NE(problem, nullptr);
  EXPECT_TRUE(Contains(problem, "layout fingerprint")) << problem;
  EXPECT_EQ(FerryLibraryLoad((kModuleDir + "/abi_layout_module.so").c_str()), -1);
  EXPECT_EQ(CaptureError([] { details::ThrowRaised(); }).kind(), "RuntimeError");
}

TEST(LoadLibrary, LoadsALibraryOfThisAbiAndAPlainCLibraryWithoutARecord) {
  const char* problem = "unset";
  ASSERT_EQ(FerryLibraryAbiMismatch((kModuleDir + "/abi_module.so").c_str(), &problem), 0);
  EXPECT_EQ(problem, nullptr);
  LoadLibrary(kModuleDir + "/abi_module.so");
  EXPECT_EQ(Function::GetGlobalRequired("testing.abi.version")().cast<int64_t>(),
            FERRY_ABI_VERSION);
  problem = "unset";
  ASSERT_EQ(FerryLibraryAbiMismatch((kModuleDir + "/plain_c_module.so").c_str(), &problem), 0);
  EXPECT_EQ(problem, nullptr);
  LoadLibrary(kModuleDir + "/plain_c_module.so");
  EXPECT_EQ(Function::GetGlobalRequired("testing.plain_c.answer")().cast<int64_t>(), 42);
  // Its Functions come from the C ABI, which cannot pin it: it is never unloaded.
  Error e = CaptureError([] { UnloadLibrary(kModuleDir + "/plain_c_module.so"); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "not built against Ferry's C++ headers")) << e.what();
  EXPECT_EQ(Function::GetGlobalRequired("testing.plain_c.answer")().cast<int64_t>(), 42);
}

bool TypeKeyRegistered(const char* key) {
  int32_t index = -1;
  if (FerryTypeKeyToIndex(key, &index) == 0) return true;
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  if (error != nullptr) FerryObjectDecRef(error);
  return false;
}

TEST(LoadLibrary, DuplicateGlobalUndoesTheWholeLibrary) {
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second load fails the same way
    Error e = CaptureError([] { LoadLibrary(kModuleDir + "/duplicate_module.so"); });
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_TRUE(Contains(e.message(), "'testing.taken' is already registered")) << e.what();
    EXPECT_TRUE(Contains(e.message(), "duplicate_module.cc")) << e.what();
    EXPECT_TRUE(Contains(e.message(), "duplicate_module.so")) << e.what();
    EXPECT_EQ(Function::GetGlobalRequired("testing.taken")().cast<int>(), 1) << "ours is kept";
    EXPECT_FALSE(Function::GetGlobal("testing.duplicate_module.fresh").has_value())
        << "a global of the failed library stayed callable";
  }
}

TEST(LoadLibrary, RecordsWhichLibraryRegisteredEachGlobal) {
  LoadLibrary(kModuleDir + "/good_module.so");
  const char* path = nullptr;
  ASSERT_EQ(FerryLibraryOfGlobal("testing.module.add", &path), 0);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path[0], '/') << "made absolute: " << path;
  EXPECT_TRUE(Contains(path, "/modules/good_module.so")) << path;
  // The core, the test program and failed loads record nothing.
  ASSERT_EQ(FerryLibraryOfGlobal("ferry.SaveJSON", &path), 0);
  EXPECT_EQ(path, nullptr);
  ASSERT_EQ(FerryLibraryOfGlobal("testing.taken", &path), 0);  // this program registers it
  EXPECT_EQ(path, nullptr);
  ASSERT_EQ(FerryLibraryOfTypeKey("ferry.Array", &path), 0);
  EXPECT_EQ(path, nullptr);
  CaptureError([] { LoadLibrary(kModuleDir + "/duplicate_module.so"); });
  ASSERT_EQ(FerryLibraryOfGlobal("testing.duplicate_module.fresh", &path), 0);
  EXPECT_EQ(path, nullptr);
  // A type the library makes at run time (its first counter), not while it loads: unknown.
  Function::GetGlobalRequired("testing.module.make_counter")(0);
  ASSERT_EQ(FerryLibraryOfTypeKey("testing.module.Counter", &path), 0);
  EXPECT_EQ(path, nullptr);
  // A global replaced after the load is no longer the library's.
  Function add = Function::GetGlobalRequired("testing.module.add");
  Function::SetGlobal("testing.module.add", Function::FromTyped([](int64_t a) { return a; }), true);
  ASSERT_EQ(FerryLibraryOfGlobal("testing.module.add", &path), 0);
  EXPECT_EQ(path, nullptr);
  Function::SetGlobal("testing.module.add", add, true);
  ASSERT_EQ(FerryLibraryOfGlobal("testing.module.add", &path), 0);
  EXPECT_NE(path, nullptr) << "the library's own function again";
  EXPECT_EQ(FerryLibraryOfGlobal(nullptr, &path), -1);
  EXPECT_EQ(CaptureError([] { details::ThrowRaised(); }).kind(), "ValueError");
}

TEST(LoadLibrary, TypeKeyWithAnotherParentIsAnErrorNotATerminate) {
  LoadLibrary(kModuleDir + "/good_module.so");
  // good_module registers its counter's type at the first counter it makes.
  Function::GetGlobalRequired("testing.module.make_counter")(0);
  for (int attempt = 0; attempt < 2; ++attempt) {
    Error e = CaptureError([] { LoadLibrary(kModuleDir + "/conflict_parent_module.so"); });
    EXPECT_EQ(e.kind(), "RuntimeError");
    const std::string message(e.message());
    EXPECT_TRUE(Contains(message, "'testing.module.Counter'")) << message;
    EXPECT_TRUE(Contains(message, "'ferry.Object'")) << message;
    EXPECT_TRUE(Contains(message, "'testing.conflict.Base'")) << message;
    EXPECT_TRUE(Contains(message, "conflict_parent_module.so")) << message;
    EXPECT_FALSE(Function::GetGlobal("testing.conflict.before").has_value());
    EXPECT_FALSE(Function::GetGlobal("testing.conflict.make").has_value());
    EXPECT_FALSE(TypeKeyRegistered("testing.conflict.Base"));
    EXPECT_EQ(GetNodeInfo("testing.conflict.Base"), nullptr);
  }
  // good_module's type and globals are untouched.
  ObjectRef counter =
      Function::GetGlobalRequired("testing.module.make_counter")(7).cast<ObjectRef>();
  EXPECT_STREQ(counter->GetTypeKey(), "testing.module.Counter");
  EXPECT_EQ(Function::GetGlobalRequired("testing.module.counter_value")(counter).cast<int64_t>(),
            7);
}

TEST(LoadLibrary, RegistrationsThrowingAnyExceptionUndoTheLibrary) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Error e = CaptureError([] { LoadLibrary(kModuleDir + "/throwing_module.so"); });
    EXPECT_EQ(e.kind(), "RuntimeError");
    const std::string message(e.message());
    EXPECT_TRUE(Contains(message, "ExplodingNode refuses to be built")) << message;
    EXPECT_TRUE(Contains(message, "throwing_module.so")) << message;
    EXPECT_TRUE(Contains(message, "1 more failed registration")) << message;  // bad_names
    EXPECT_FALSE(Function::GetGlobal("testing.throwing.before").has_value());
    EXPECT_FALSE(Function::GetGlobal("testing.throwing.after").has_value());
    EXPECT_FALSE(Function::GetGlobal("testing.throwing.bad_names").has_value());
    EXPECT_FALSE(TypeKeyRegistered("testing.throwing.Exploding"));
    EXPECT_EQ(GetNodeInfo("testing.throwing.Exploding"), nullptr);
  }
}

TEST(LoadLibrary, DuplicateNodeUndoesTheFirstRegistration) {
  Error e = CaptureError([] { LoadLibrary(kModuleDir + "/duplicate_node_module.so"); });
  EXPECT_TRUE(Contains(e.message(), "'testing.Twice' is registered twice")) << e.what();
  EXPECT_EQ(GetNodeInfo("testing.Twice"), nullptr);
  EXPECT_FALSE(TypeKeyRegistered("testing.Twice"));
}

// What docs/reliability.md does not promise: a user's own static initializer that throws
// (not a FERRY_REGISTER_* line, whose failures LoadLibrary reports) leaves the exception inside
// the dynamic loader, and the process terminates with its message. The page says what to write
// instead; this test keeps the page true.
TEST(LoadLibrary, AThrowingStaticInitializerOfTheUserTerminatesTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(LoadLibrary(kModuleDir + "/static_init_throwing_module.so"),
               "a user's static initializer threw");
}

TEST(Function, CallingANullFunctionIsAValueError) {
  Function null;
  ExpectError([&] { null(1); }, "ValueError", {"null Function"});
  // A typed function whose Function parameter was given None calls it: the same error.
  Function call = Function::FromTyped([](Function f) { return f(41); });
  ExpectError([&] { call(Any()); }, "ValueError", {"null Function"});
  TypedFunction<int64_t(int64_t)> typed;
  ExpectError([&] { typed(1); }, "ValueError", {"null Function"});
}

// Thread cancellation unwinds with abi::__forced_unwind; a `catch (...)` that swallows it aborts
// the process ("FATAL: exception not rethrown"). Each case cancels a thread blocked in read()
// inside a Ferry call, in a child process (gtest death-test machinery) so an abort fails the test
// instead of the binary.
struct BlockedCall {
  int read_fd = -1;
  std::atomic<bool> entered{false};
  std::function<void()> call;  // what the thread runs; it blocks in Block()
  void Block() {
    entered = true;
    char c;
    (void)!::read(read_fd, &c, 1);  // nothing is ever written: blocks until cancelled
  }
};

// Death-test children leave with std::_Exit: they hold their objects, and no exit-time check
// (FERRY_LEAK_CHECK) should judge a test cut short.
void CancelABlockedThread(BlockedCall* blocked) {
  int fds[2];
  if (::pipe(fds) != 0) std::_Exit(10);
  blocked->read_fd = fds[0];
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    static_cast<BlockedCall*>(arg)->call();
    return nullptr;  // not reached: the call is cancelled
  };
  if (pthread_create(&thread, nullptr, run, blocked) != 0) std::_Exit(11);
  while (!blocked->entered) std::this_thread::yield();
  pthread_cancel(thread);
  void* result = nullptr;
  pthread_join(thread, &result);
  std::_Exit(result == PTHREAD_CANCELED ? 0 : 12);
}

int BlockingCallback(void* resource, const FerryAny*, int32_t, FerryAny*) {
  static_cast<BlockedCall*>(resource)->Block();
  return 0;
}

class ThreadCancellation : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    // GCC 12's ASan runtime cannot follow the forced unwind of pthread_cancel: the frames it
    // skips stay poisoned, and its own __asan_handle_no_return then fails an internal CHECK at
    // the next throw on that thread. The plain (build/) and ThreadSanitizer builds run these.
    GTEST_SKIP() << "AddressSanitizer's runtime does not support pthread_cancel unwinding";
#endif
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(ThreadCancellation, InsideACCallbackCalledThroughTheCAbi) {
  EXPECT_EXIT(
      {
        BlockedCall blocked;
        FerryObjectHandle func = nullptr;
        if (FerryFunctionCreate(&blocked, BlockingCallback, nullptr, &func) != 0) std::_Exit(20);
        blocked.call = [func] {
          FerryAny result;
          FerryFunctionCall(func, nullptr, 0, &result);
        };
        CancelABlockedThread(&blocked);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(ThreadCancellation, InsideAPackedFunctionCalledThroughTheCAbi) {
  EXPECT_EXIT(
      {
        BlockedCall blocked;
        Function f =
            Function::FromPacked([&blocked](const AnyView*, int32_t, Any*) { blocked.Block(); });
        blocked.call = [&f] {
          FerryAny result;
          FerryFunctionCall(details::ObjectUnsafe::GetHeader(f.get()), nullptr, 0, &result);
        };
        CancelABlockedThread(&blocked);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(ThreadCancellation, InsideACallbackCalledFromCpp) {
  EXPECT_EXIT(
      {
        BlockedCall blocked;
        FerryObjectHandle func = nullptr;
        if (FerryFunctionCreate(&blocked, BlockingCallback, nullptr, &func) != 0) std::_Exit(20);
        FerryAny cell{};
        cell.type_index = kFerryFunction;
        cell.v_obj = static_cast<FerryObject*>(func);
        Function f = Any::FromOwned(cell).cast<Function>();  // takes func's reference
        blocked.call = [&f] { f(); };
        CancelABlockedThread(&blocked);
      },
      ::testing::ExitedWithCode(0), "");
}

// docs/reliability.md: a `catch (...)` of the user's around a Ferry call on a thread that is
// cancelled (or ended by CPython at exit) must let abi::__forced_unwind through. Written with
// FERRY_RETHROW_FORCED_UNWIND() first the thread ends; swallowing it aborts the process.
void CatchAllAroundACallback(BlockedCall* blocked, bool rethrow_forced_unwind) {
  Function f = Function::FromPacked([blocked](const AnyView*, int32_t, Any*) { blocked->Block(); });
  blocked->call = [f, rethrow_forced_unwind] {
    try {
      f();
    } catch (...) {
      if (rethrow_forced_unwind) FERRY_RETHROW_FORCED_UNWIND();
    }
  };
  CancelABlockedThread(blocked);
}

TEST_F(ThreadCancellation, AUserCatchAllThatRethrowsTheForcedUnwindLetsTheThreadEnd) {
  EXPECT_EXIT(
      {
        BlockedCall blocked;
        CatchAllAroundACallback(&blocked, /*rethrow_forced_unwind=*/true);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(ThreadCancellation, AUserCatchAllThatSwallowsTheForcedUnwindAborts) {
  EXPECT_DEATH(
      {
        BlockedCall blocked;
        CatchAllAroundACallback(&blocked, /*rethrow_forced_unwind=*/false);
      },
      "exception not rethrown");
}

}  // namespace

TEST(Function, SignatureIsKnownForTypedFunctions) {
  // FerryFunctionGetSignature: what reprs and Python's inspect.signature show.
  Function add = Function::FromTyped([](int64_t a, double b) { return a + b; }, "demo.add");
  const char* name = nullptr;
  int32_t count = -1;
  const char* const* types = nullptr;
  auto* handle = const_cast<FunctionObj*>(add.get());
  ASSERT_EQ(FerryFunctionGetSignature(handle, &name, &count, &types), 0);
  EXPECT_STREQ(name, "demo.add");
  ASSERT_EQ(count, 3);
  EXPECT_STREQ(types[0], "int");
  EXPECT_STREQ(types[1], "float");
  EXPECT_STREQ(types[2], "float");
  Function greet = Function::FromTyped([](String) {});
  ASSERT_EQ(FerryFunctionGetSignature(const_cast<FunctionObj*>(greet.get()), &name, &count, &types),
            0);
  EXPECT_EQ(name, nullptr);
  ASSERT_EQ(count, 2);
  EXPECT_STREQ(types[0], "ferry.String");
  EXPECT_STREQ(types[1], "None");
  Function packed = Function::FromPacked([](const AnyView*, int32_t, Any*) {});
  ASSERT_EQ(
      FerryFunctionGetSignature(const_cast<FunctionObj*>(packed.get()), &name, &count, &types), 0);
  EXPECT_EQ(count, 0) << "a packed function's types are not known";
  EXPECT_EQ(types, nullptr);
}
