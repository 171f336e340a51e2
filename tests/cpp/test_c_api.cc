// Compile-time freeze of the C ABI: sizes and offsets of every ABI struct and the values of the
// fixed type indices. A change here breaks every library built against an older header.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <cstddef>

static_assert(sizeof(FerryObject) == 16);
static_assert(offsetof(FerryObject, ref_counter) == 0);
static_assert(offsetof(FerryObject, type_index) == 4);
static_assert(offsetof(FerryObject, deleter) == 8);

static_assert(sizeof(FerryAny) == 16);
static_assert(offsetof(FerryAny, type_index) == 0);
static_assert(offsetof(FerryAny, small_len) == 4);
static_assert(offsetof(FerryAny, v_int64) == 8);
static_assert(offsetof(FerryAny, v_float64) == 8);
static_assert(offsetof(FerryAny, v_ptr) == 8);
static_assert(offsetof(FerryAny, v_obj) == 8);
static_assert(offsetof(FerryAny, v_c_str) == 8);
static_assert(offsetof(FerryAny, v_dtype) == 8);
static_assert(offsetof(FerryAny, v_bytes) == 8);

static_assert(sizeof(FerryDataType) == 4);
static_assert(offsetof(FerryDataType, code) == 0);
static_assert(offsetof(FerryDataType, bits) == 1);
static_assert(offsetof(FerryDataType, lanes) == 2);

static_assert(offsetof(FerryTypeInfo, type_index) == 0);
static_assert(offsetof(FerryTypeInfo, type_depth) == 4);
static_assert(offsetof(FerryTypeInfo, type_key) == 8);
static_assert(offsetof(FerryTypeInfo, type_ancestors) == 16);
static_assert(offsetof(FerryTypeInfo, num_child_slots) == 24);
static_assert(offsetof(FerryTypeInfo, child_slots_can_overflow) == 28);
static_assert(sizeof(FerryTypeInfo) == 32);

static_assert(kFerryNone == 0 && kFerryInt == 1 && kFerryBool == 2 && kFerryFloat == 3 &&
              kFerryOpaquePtr == 4 && kFerryDataType == 5 && kFerryRawStr == 6 &&
              kFerrySmallStr == 7);
static_assert(kFerryStaticObjectBegin == 64 && kFerryObject == 64 && kFerryString == 65 &&
              kFerryError == 66 && kFerryFunction == 67 && kFerryArray == 68 && kFerryMap == 69 &&
              kFerryShape == 70 && kFerryDynamicObjectBegin == 128);

// The C++ object starts with the C header and adds nothing before it.
static_assert(sizeof(ferry::Object) == sizeof(FerryObject));
static_assert(sizeof(ferry::ObjectRef) == sizeof(void*));
static_assert(sizeof(ferry::ObjectPtr<ferry::Object>) == sizeof(void*));
static_assert(sizeof(ferry::String) == sizeof(FerryAny));  // a cell: inline bytes or a StringObj
static_assert(sizeof(ferry::StringObj) == 32);
static_assert(sizeof(ferry::DataType) == sizeof(FerryDataType));

namespace {

TEST(CApi, VersionIsOneString) {
  EXPECT_STREQ(FERRY_VERSION_STRING, "0.1.0");
  EXPECT_EQ(FERRY_VERSION_MAJOR * 10000 + FERRY_VERSION_MINOR * 100 + FERRY_VERSION_PATCH, 100);
}

TEST(CApi, HandleIsTheObjectAddress) {
  ferry::ObjectRef s = ferry::String("abc");
  FerryObjectHandle handle = const_cast<ferry::Object*>(s.get());
  EXPECT_EQ(FerryObjectIncRef(handle), 0);
  EXPECT_EQ(s.use_count(), 2);
  EXPECT_EQ(FerryObjectDecRef(handle), 0);
  EXPECT_EQ(s.use_count(), 1);
  EXPECT_EQ(static_cast<FerryObject*>(handle)->type_index, kFerryString);
}

TEST(CApi, ACallsResultCellHoldsNoneAfterAFailure) {
  // The rule "Results" of c_api.h: FerryFunctionCall presets None, whatever fails.
  ferry::Function throws = ferry::Function::FromTyped([](int64_t x) -> int64_t {
    if (x < 0) FERRY_THROW(ferry::ValueError) << "negative";
    return x;
  });
  FerryObjectHandle handle =
      const_cast<ferry::Object*>(static_cast<const ferry::Object*>(throws.get()));
  auto garbage = [] {
    FerryAny cell;
    cell.type_index = kFerryInt;
    cell.small_len = 0;
    cell.v_int64 = 12345;
    return cell;
  };
  FerryAny result = garbage();
  EXPECT_EQ(FerryFunctionCall(handle, nullptr, -1, &result), -1) << "a bad argument array";
  EXPECT_EQ(result.type_index, kFerryNone);
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  FerryObjectDecRef(error);

  FerryAny arg = garbage();
  arg.v_int64 = -1;
  result = garbage();
  EXPECT_EQ(FerryFunctionCall(handle, &arg, 1, &result), -1) << "the function throws";
  EXPECT_EQ(result.type_index, kFerryNone);
  FerryErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  FerryObjectDecRef(error);

  arg.v_int64 = 7;
  EXPECT_EQ(FerryFunctionCall(handle, &arg, 1, &result), 0);
  EXPECT_EQ(result.type_index, kFerryInt);
  EXPECT_EQ(result.v_int64, 7);
}

TEST(CApi, ABorrowedStringIsReadWithTheLengthItsProducerGave) {
  // kFerryRawStr: small_len is the length when given, 0 when the producer did not count it.
  // "first\0second" makes the two readings differ: 12 bytes by the length, 5 up to the NUL.
  static const char kTwoParts[] = "first\0second";
  const std::string whole(kTwoParts, sizeof(kTwoParts) - 1);
  ferry::Function echo_string = ferry::Function::FromTyped([](std::string s) { return s; });
  ferry::Function echo_any = ferry::Function::FromTyped([](ferry::Any a) { return a; });
  ferry::Function view_size = ferry::Function::FromTyped([](ferry::AnyView v) {
    std::string_view view;
    EXPECT_TRUE(ferry::details::AnyToStringView(v.raw(), &view));
    return view.size();
  });
  auto call = [](const ferry::Function& f, uint32_t small_len) {
    FerryAny arg;
    arg.type_index = kFerryRawStr;
    arg.small_len = small_len;
    arg.v_c_str = kTwoParts;
    FerryAny result;
    FerryObjectHandle handle =
        const_cast<ferry::Object*>(static_cast<const ferry::Object*>(f.get()));
    EXPECT_EQ(FerryFunctionCall(handle, &arg, 1, &result), 0);
    return ferry::Any::FromOwned(result);
  };
  EXPECT_EQ(call(echo_string, 12).cast<std::string>(), whole);
  EXPECT_EQ(call(echo_any, 12).cast<std::string>(), whole) << "Any(AnyView) copies 12 bytes";
  EXPECT_EQ(call(view_size, 12).cast<int64_t>(), 12);
  EXPECT_EQ(call(echo_string, 0).cast<std::string>(), "first");
  EXPECT_EQ(call(echo_any, 0).cast<std::string>(), "first");
  EXPECT_EQ(call(view_size, 0).cast<int64_t>(), 5);

  // Ferry's own producers count: a view of a std::string carries its length, a view of a
  // const char* does not (counting it would cost the strlen the reader may never need).
  std::string text = "a std::string longer than seven bytes";
  EXPECT_EQ(ferry::AnyView(text).raw()->small_len, text.size());
  EXPECT_EQ(ferry::AnyView("a C string of unknown length").raw()->small_len, 0u);
}

int WritesThenFails(void* resource, const FerryAny*, int32_t, FerryAny* result) {
  // Stores a new reference to the String at `resource`, then fails.
  auto* kept = static_cast<ferry::ObjectRef*>(resource);
  FerryObjectHandle handle = const_cast<ferry::Object*>(kept->get());
  FerryObjectIncRef(handle);
  result->type_index = kFerryString;
  result->v_obj = static_cast<FerryObject*>(handle);
  FerryErrorSetRaisedFromCStr("ValueError", "after the write");
  return -1;
}

TEST(CApi, WhatAFailingCallbackWroteIsReleasedNotReturned) {
  // Called from C++, a C callback's failure is an exception; the reference it stored goes.
  ferry::ObjectRef kept = ferry::String("a string object, too long to be inline");
  FerryObjectHandle handle = nullptr;
  ASSERT_EQ(FerryFunctionCreate(&kept, WritesThenFails, nullptr, &handle), 0);
  ferry::Function f(ferry::details::ObjectUnsafe::PtrFromOwned<ferry::Object>(
      ferry::details::ObjectUnsafe::FromHeader(static_cast<FerryObject*>(handle))));
  const int64_t before = kept.use_count();
  EXPECT_THROW(f(), ferry::Error);
  EXPECT_EQ(kept.use_count(), before);
  // Called through CallPacked with the caller's own result cell: after the failure that cell
  // holds None, not the reference the callback stored (and the reference is released).
  ferry::Any result;
  EXPECT_THROW(f->CallPacked(nullptr, 0, &result), ferry::Error);
  EXPECT_TRUE(result.is_none()) << result.GetTypeKey();
  EXPECT_EQ(kept.use_count(), before);
}

TEST(CApi, WhatAFailingBodyWroteIsReleasedNotReturned) {
  // A packed body that stores its result and then throws: the C caller gets None back, and the
  // stored object is released (its count shows it; LeakSanitizer would report it otherwise).
  ferry::ObjectRef kept = ferry::String("a string object, too long to be inline");
  ferry::Function writes_then_throws =
      ferry::Function::FromPacked([kept](const ferry::AnyView*, int32_t, ferry::Any* out) {
        *out = kept;
        FERRY_THROW(ferry::ValueError) << "after the write";
      });
  FerryObjectHandle handle =
      const_cast<ferry::Object*>(static_cast<const ferry::Object*>(writes_then_throws.get()));
  FerryAny result;
  result.type_index = kFerryNone;
  result.small_len = 0;
  result.v_int64 = 0;
  const int64_t before = kept.use_count();
  EXPECT_EQ(FerryFunctionCall(handle, nullptr, 0, &result), -1);
  EXPECT_EQ(result.type_index, kFerryNone);
  EXPECT_EQ(kept.use_count(), before);
  FerryFunctionSafeCall safe_call = nullptr;
  ASSERT_EQ(FerryFunctionGetSafeCall(handle, &safe_call), 0);
  EXPECT_EQ(safe_call(handle, nullptr, 0, &result), -1);
  EXPECT_EQ(result.type_index, kFerryNone);
  EXPECT_EQ(kept.use_count(), before);
  FerryObjectHandle error = nullptr;
  FerryErrorMoveFromRaised(&error);
  ASSERT_NE(error, nullptr);
  FerryObjectDecRef(error);
}

}  // namespace
