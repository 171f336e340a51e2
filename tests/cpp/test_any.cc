// Tests of ferry/any.h: every conversion into and out of Any/AnyView, the rejected ones and their
// messages, ownership of objects and strings.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "test_util.h"

namespace {

using namespace ferry;

class PointNode : public Object {
 public:
  int64_t x = 0;
  static constexpr const char* _type_key = "test.any.Point";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PointNode, Object);
};
class Point : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Point, ObjectRef, PointNode);
};

// A type key that begins like an integer type's name.
class IntervalNode : public Object {
 public:
  static constexpr const char* _type_key = "interval.Interval";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntervalNode, Object);
};
class Interval : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Interval, ObjectRef, IntervalNode);
};

using ferry_test::ExpectError;

TEST(Any, IsSixteenBytes) {
  EXPECT_EQ(sizeof(Any), 16u);
  EXPECT_EQ(sizeof(AnyView), 16u);
}

TEST(Any, HoldsNone) {
  Any none;
  EXPECT_TRUE(none.is_none());
  EXPECT_STREQ(none.GetTypeKey(), "None");
  EXPECT_EQ(none.cast<std::nullptr_t>(), nullptr);
  EXPECT_FALSE(none.cast<Point>().defined()) << "None is a null nullable reference";
  EXPECT_EQ(none.cast<void*>(), nullptr);
  ExpectError([&] { none.cast<int64_t>(); }, "TypeError", {"expected int", "got None"});
  ExpectError([&] { none.cast<String>(); }, "TypeError", {"expected ferry.String", "got None"});
}

TEST(Any, HoldsBoolAndIntegers) {
  Any b = true;
  EXPECT_EQ(b.type_index(), kFerryBool);
  EXPECT_TRUE(b.cast<bool>());
  EXPECT_EQ(b.cast<int64_t>(), 1);
  Any i = int64_t{-5};
  EXPECT_EQ(i.type_index(), kFerryInt);
  EXPECT_STREQ(i.GetTypeKey(), "int");
  EXPECT_EQ(i.cast<int64_t>(), -5);
  EXPECT_EQ(i.cast<int>(), -5);
  EXPECT_EQ(i.cast<int8_t>(), -5);
  EXPECT_TRUE(i.cast<bool>());
  EXPECT_DOUBLE_EQ(i.cast<double>(), -5.0);
  Any big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(big.cast<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Any(uint32_t{4000000000u}).cast<uint32_t>(), 4000000000u);
}

TEST(Any, RejectsOutOfRangeIntegers) {
  Any i = 300;
  EXPECT_FALSE(i.as<int8_t>().has_value());
  EXPECT_FALSE(i.as<uint8_t>().has_value());
  EXPECT_EQ(i.as<int16_t>().value(), 300);
  ExpectError([&] { i.cast<int8_t>(); }, "OverflowError", {"300", "int8"});
  ExpectError([&] { Any(-1).cast<uint32_t>(); }, "OverflowError", {"-1", "uint32"});
  ExpectError([&] { Any(int64_t{1} << 40).cast<int32_t>(); }, "OverflowError", {"int32"});
  ExpectError([&] { Any(std::numeric_limits<uint64_t>::max()); }, "OverflowError", {"int64"});
  EXPECT_EQ(Any(uint64_t{1} << 62).cast<uint64_t>(), uint64_t{1} << 62);
  // An int where an object is expected is a TypeError, whatever the type key begins with.
  ExpectError([] { Any(5).cast<Interval>(); }, "TypeError",
              {"expected interval.Interval but got int"});
  Function f = Function::FromTyped([](Interval) {}, "f");
  ExpectError([&] { f(5); }, "TypeError", {"interval.Interval"});
}

TEST(Any, FloatsPrintAsPythonReprsThem) {
  // The shortest text that reads back as the value, never one that reads as an int.
  auto repr = [](double d) { return details::AnyRepr(Any(d).raw()); };
  EXPECT_EQ(repr(2.0), "2.0");
  EXPECT_EQ(repr(-0.0), "-0.0");
  EXPECT_EQ(repr(0.1), "0.1");
  EXPECT_EQ(repr(2.5), "2.5");
  EXPECT_EQ(repr(123456.789), "123456.789");
  EXPECT_EQ(repr(1e15), "1000000000000000.0");
  EXPECT_EQ(repr(1e16), "1e+16");
  EXPECT_EQ(repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(repr(0.0001), "0.0001");
  EXPECT_EQ(repr(1e-5), "1e-05");
  EXPECT_EQ(repr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(repr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(repr(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(Any, HoldsFloats) {
  Any f = 2.5;
  EXPECT_EQ(f.type_index(), kFerryFloat);
  EXPECT_DOUBLE_EQ(f.cast<double>(), 2.5);
  EXPECT_FLOAT_EQ(f.cast<float>(), 2.5f);
  ExpectError([&] { f.cast<int64_t>(); }, "TypeError", {"expected int but got float"});
  ExpectError([&] { f.cast<bool>(); }, "TypeError", {"expected bool but got float"});
}

TEST(Any, HoldsOpaquePointersAndDataTypes) {
  int target = 0;
  Any p = static_cast<void*>(&target);
  EXPECT_EQ(p.type_index(), kFerryOpaquePtr);
  EXPECT_EQ(p.cast<void*>(), &target);
  Any t = DataType("float32x4");
  EXPECT_EQ(t.type_index(), kFerryDataType);
  EXPECT_EQ(t.cast<DataType>(), DataType::Float(32, 4));
  EXPECT_EQ(Any("int8").cast<DataType>(), DataType::Int(8)) << "text parses";
  ExpectError([&] { Any("not a type").cast<DataType>(); }, "TypeError", {"DataType"});
  ExpectError([&] { t.cast<void*>(); }, "TypeError", {"void*", "DataType"});
}

TEST(Any, StoresShortStringsInline) {
  Any s = "abc";
  EXPECT_EQ(s.type_index(), kFerrySmallStr);
  EXPECT_STREQ(s.GetTypeKey(), "ferry.String");
  EXPECT_EQ(s.cast<std::string>(), "abc");
  EXPECT_EQ(s.cast<String>(), "abc");
  EXPECT_STREQ(s.cast<const char*>(), "abc");
  Any seven = std::string("1234567");
  EXPECT_EQ(seven.type_index(), kFerrySmallStr);
  EXPECT_STREQ(seven.cast<const char*>(), "1234567") << "7 bytes still end in a NUL";
  Any eight = "12345678";
  EXPECT_EQ(eight.type_index(), kFerryString);
  EXPECT_EQ(eight.cast<std::string>(), "12345678");
  Any empty = "";
  EXPECT_EQ(empty.cast<std::string>(), "");
}

TEST(Any, OwnsItsStringsButAnyViewBorrows) {
  std::string text = "a string that is long enough to be an object";
  AnyView view = text;
  EXPECT_EQ(view.type_index(), kFerryRawStr) << "a view points at the caller's bytes";
  Any owned = view;
  EXPECT_EQ(owned.type_index(), kFerryString) << "an Any copies them";
  text.assign(text.size(), 'x');
  EXPECT_EQ(owned.cast<std::string>(), "a string that is long enough to be an object");
  ObjectRef as_object = owned.cast<ObjectRef>();
  EXPECT_NE(as_object.as<StringObj>(), nullptr);
  EXPECT_EQ(Any(AnyView("raw")).cast<ObjectRef>().as<StringObj>()->size, 3u)
      << "a raw string converts to a String where an ObjectRef is expected";
}

TEST(Any, AStdStringWithANulIsNeverCutShort) {
  // Short ones go inline with their length; a longer one cannot be borrowed as a C string.
  std::string short_nul("a\0b", 3);
  AnyView view = short_nul;
  EXPECT_EQ(view.type_index(), kFerrySmallStr);
  EXPECT_EQ(view.cast<std::string>(), short_nul);
  Map<String, int64_t> m = {{"a", 1}};
  EXPECT_FALSE(m.contains(short_nul)) << "\"a\\0b\" is not the key \"a\"";
  Function size = Function::FromTyped([](std::string s) { return static_cast<int64_t>(s.size()); });
  EXPECT_EQ(size(short_nul).cast<int64_t>(), 3);
  std::string long_nul("a string with\0 a NUL inside", 27);
  ExpectError([&] { size(long_nul); }, "ValueError",
              {"std::string of 27 bytes with a NUL at byte 13", "ferry::String(s)"});
  EXPECT_EQ(size(String(long_nul)).cast<int64_t>(), 27);
  EXPECT_EQ(Any(long_nul).cast<std::string>(), long_nul) << "an Any owns a copy: no limit";
}

TEST(Any, HoldsObjectsAndCountsReferences) {
  Point p(make_object<PointNode>());
  {
    Any a = p;
    EXPECT_EQ(p.use_count(), 2);
    Any b = a;
    EXPECT_EQ(p.use_count(), 3);
    Any c = std::move(b);
    EXPECT_EQ(p.use_count(), 3);
    AnyView v = a;
    EXPECT_EQ(p.use_count(), 3) << "a view adds no reference";
    EXPECT_EQ(v.cast<Point>().get(), p.get());
    EXPECT_STREQ(a.GetTypeKey(), "test.any.Point");
    EXPECT_EQ(a.as<PointNode>(), p.get());
    EXPECT_EQ(a.as<StringObj>(), nullptr);
    c.reset();
    EXPECT_EQ(p.use_count(), 2);
  }
  EXPECT_EQ(p.use_count(), 1);
  Any moved = Point(p);
  EXPECT_EQ(p.use_count(), 2) << "moving a reference in adds nothing";
  ExpectError([&] { moved.cast<String>(); }, "TypeError",
              {"expected ferry.String but got test.any.Point"});
  ExpectError([&] { moved.cast<Function>(); }, "TypeError", {"ferry.Function", "test.any.Point"});
  ExpectError([&] { moved.cast<int64_t>(); }, "TypeError", {"int", "test.any.Point"});
  ExpectError([&] { Any(1).cast<Point>(); }, "TypeError", {"test.any.Point", "got int"});
}

TEST(Any, CastsInPlaceWithTheSameErrorsAsAnyView) {
  // Any::cast reads its own cell; the messages are the ones AnyView::cast gives.
  auto expect_same = [](const Any& value, auto cast, const char* kind, const char* message) {
    for (int view = 0; view < 2; ++view) {
      try {
        view ? cast(AnyView(value)) : cast(value);
        ADD_FAILURE() << "expected " << kind;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), kind);
        EXPECT_EQ(e.message(), message) << (view ? "AnyView" : "Any");
      }
    }
  };
  expect_same(
      Any(300), [](const auto& v) { v.template cast<int8_t>(); }, "OverflowError",
      "integer 300 is out of range for int8");
  expect_same(
      Any(2.5), [](const auto& v) { v.template cast<int64_t>(); }, "TypeError",
      "expected int but got float");
  expect_same(
      Any(Array<Any>({Any(1), Any("s")})), [](const auto& v) { v.template cast<Array<int64_t>>(); },
      "TypeError",
      "expected Array[int] but got ferry.Array (element 1: expected int but got "
      "ferry.String)");
  Point p(make_object<PointNode>());
  const Any a = p;
  EXPECT_EQ(a.as<PointNode>(), p.get());
  EXPECT_EQ(a.as<Point>()->get(), p.get());
  EXPECT_EQ(a.as<int64_t>(), std::nullopt);
  EXPECT_EQ(p.use_count(), 2) << "as<Node> and a failed as<T> take no reference";
}

TEST(Any, EachCastingVerbHasOneResultShape) {
  // cast<T>: T or an error; try_cast<T>: std::optional<T> for every T; as<XNode>: const XNode*.
  Point p(make_object<PointNode>());
  const Any a = p;
  const AnyView view = a;
  static_assert(std::is_same_v<decltype(a.try_cast<int64_t>()), std::optional<int64_t>>);
  static_assert(std::is_same_v<decltype(a.try_cast<Point>()), std::optional<Point>>);
  static_assert(std::is_same_v<decltype(view.try_cast<String>()), std::optional<String>>);
  static_assert(std::is_same_v<decltype(a.as<PointNode>()), const PointNode*>);
  static_assert(std::is_same_v<decltype(view.as<PointNode>()), const PointNode*>);
  // The older spelling: as<T> of a value or reference type is try_cast<T>.
  static_assert(std::is_same_v<decltype(a.as<int64_t>()), decltype(a.try_cast<int64_t>())>);
  static_assert(std::is_same_v<decltype(a.as<Point>()), decltype(a.try_cast<Point>())>);
  EXPECT_EQ(a.try_cast<Point>()->get(), p.get());
  EXPECT_EQ(view.try_cast<int64_t>(), std::nullopt);
  EXPECT_EQ(Any(300).try_cast<int16_t>(), int16_t{300});
  EXPECT_EQ(Any(300).try_cast<int8_t>(), std::nullopt) << "out of range: nullopt, no throw";
  EXPECT_EQ(Any(2.5).try_cast<double>(), 2.5);
  EXPECT_EQ(view.as<PointNode>(), p.get());
  EXPECT_EQ(view.as<StringObj>(), nullptr);
  EXPECT_EQ(p.use_count(), 2) << "as<Node> and a failed try_cast take no reference";
}

TEST(Any, NotNullableReferencesRejectNone) {
  ExpectError([&] { Any().cast<String>(); }, "TypeError", {"ferry.String"});
  EXPECT_FALSE(Any().as<String>().has_value());
  EXPECT_TRUE(Any().as<Point>().has_value());
}

TEST(Any, AssignmentReleasesThePreviousValue) {
  Point p(make_object<PointNode>());
  Any a = p;
  EXPECT_EQ(p.use_count(), 2);
  a = 3;
  EXPECT_EQ(p.use_count(), 1);
  a = p;
  a = a;  // self-assignment keeps the value
  EXPECT_EQ(p.use_count(), 2);
  EXPECT_EQ(a.cast<Point>().get(), p.get());
}

TEST(Any, CrossesTheCAbi) {
  Point p(make_object<PointNode>());
  FerryAny cell = Any(p).MoveToOwned();
  EXPECT_EQ(p.use_count(), 2);
  ASSERT_EQ(FerryAnyRelease(&cell), 0);
  EXPECT_EQ(p.use_count(), 1);
  EXPECT_EQ(cell.type_index, kFerryNone);
  ASSERT_EQ(FerryAnyRelease(&cell), 0) << "releasing None is a no-op";
}

}  // namespace
