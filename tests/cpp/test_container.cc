// Tests of ferry/container/: Array, Map, Optional, Variant, Shape — copy-on-write, order,
// errors, typed conversion and the globals other languages use.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>  // quiet_NaN
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_util.h"

namespace {

using namespace ferry;
using ferry_test::ExpectError;

class LeafNode : public Object {
 public:
  int64_t id = 0;
  explicit LeafNode(int64_t id) : id(id) {}
  static constexpr const char* _type_key = "test.container.Leaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LeafNode, Object);
};
class Leaf : public ObjectRef {
 public:
  explicit Leaf(int64_t id) : ObjectRef(make_object<LeafNode>(id)) {}
  FERRY_DEFINE_OBJECT_REF_METHODS(Leaf, ObjectRef, LeafNode);
};

template <typename T>
std::vector<T> ToVector(const Array<T>& a) {
  return std::vector<T>(a.begin(), a.end());
}

// ---------------------------------------------------------------------------------------------
// Array

TEST(Array, EmptyArraysShareOneStorage) {
  Array<int64_t> a, b;
  EXPECT_TRUE(a.same_as(b));
  EXPECT_EQ(a.size(), 0u);
  EXPECT_TRUE(a.empty());
}

TEST(Array, ConstructsFromListsVectorsAndRanges) {
  Array<int64_t> a = {1, 2, 3};
  EXPECT_EQ(ToVector(a), (std::vector<int64_t>{1, 2, 3}));
  std::vector<int64_t> v = {4, 5};
  EXPECT_EQ(ToVector(Array<int64_t>(v)), v);
  EXPECT_EQ(ToVector(Array<int64_t>(v.begin(), v.end())), v);
  EXPECT_EQ(ToVector(Array<int64_t>(3, 7)), (std::vector<int64_t>{7, 7, 7}));
  Array<String> s = {"x", "yy"};
  EXPECT_EQ(s[1], "yy");
  EXPECT_EQ(s.front(), "x");
  EXPECT_EQ(s.back(), "yy");
}

TEST(Array, MutationThroughOneHandleIsNeverSeenThroughAnother) {
  Array<int64_t> a = {1, 2, 3};
  Array<int64_t> b = a;
  EXPECT_TRUE(a.same_as(b));
  b.push_back(4);
  b.Set(0, 10);
  EXPECT_EQ(ToVector(a), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(ToVector(b), (std::vector<int64_t>{10, 2, 3, 4}));

  Array<int64_t> c = b;
  c.erase(c.begin());
  c.insert(c.begin(), 99);
  c.resize(2);
  EXPECT_EQ(ToVector(b), (std::vector<int64_t>{10, 2, 3, 4}));
  EXPECT_EQ(ToVector(c), (std::vector<int64_t>{99, 2}));

  Array<int64_t> d = c;
  d.clear();
  EXPECT_EQ(c.size(), 2u);
  EXPECT_TRUE(d.empty());
}

TEST(Array, MutatesInPlaceWhenUnique) {
  Array<int64_t> a;
  a.reserve(16);
  const Object* storage = a.get();
  for (int64_t i = 0; i < 16; ++i) a.push_back(i);
  EXPECT_EQ(a.get(), storage) << "push_back within capacity must not reallocate";
  a.Set(3, 30);
  a.erase(a.begin() + 1);
  a.insert(a.begin(), -1);
  a.pop_back();
  EXPECT_EQ(a.get(), storage);
  EXPECT_EQ(a.size(), 15u);
  EXPECT_EQ(a[0], -1);
  EXPECT_EQ(a[1], 0);
  EXPECT_EQ(a[2], 2);
  EXPECT_EQ(a[3], 30);
}

TEST(Array, PushBackGrowsGeometrically) {
  Array<int64_t> a;
  int reallocations = 0;
  const Object* storage = a.get();
  for (int64_t i = 0; i < 100000; ++i) {
    a.push_back(i);
    if (a.get() != storage) ++reallocations, storage = a.get();
  }
  EXPECT_LE(reallocations, 20);
  int64_t sum = 0;
  for (int64_t x : a) sum += x;
  EXPECT_EQ(sum, 100000LL * 99999 / 2);
}

TEST(Array, GrowingInPlaceKeepsElementsAndCounts) {
  // A uniquely held array grows its block with realloc: the cells move as bytes, so every
  // element and every reference count must come through unchanged.
  Leaf leaf(7);
  {
    Array<Any> a;
    for (int64_t i = 0; i < 5000; ++i) {
      if (i % 2 == 0) {
        a.push_back(Any(leaf));
      } else {
        a.push_back(Any(i));
      }
      ASSERT_TRUE(a.unique());
    }
    EXPECT_EQ(leaf.use_count(), 1 + 2500);
    for (int64_t i = 0; i < 5000; ++i) {
      if (i % 2 == 0) {
        ASSERT_TRUE(a[i].cast<Leaf>().same_as(leaf)) << i;
      } else {
        ASSERT_EQ(a[i].cast<int64_t>(), i);
      }
    }
    a.pop_back();  // an int
    a.pop_back();  // a Leaf
    EXPECT_EQ(leaf.use_count(), 1 + 2499);
    a.erase(a.begin(), a.begin() + 10);
    EXPECT_EQ(leaf.use_count(), 1 + 2494);
    a.resize(100);
    EXPECT_EQ(leaf.use_count(), 1 + 50);
    a.clear();
    EXPECT_EQ(leaf.use_count(), 1);
    a.push_back(Any(leaf));
  }
  EXPECT_EQ(leaf.use_count(), 1);
}

TEST(Array, GrowingASharedArrayCopiesAndLeavesTheOtherHandleAlone) {
  Leaf leaf(1);
  Array<Leaf> a;
  for (int i = 0; i < 4; ++i) a.push_back(leaf);
  ASSERT_EQ(a.capacity(), 4);
  Array<Leaf> b = a;
  const Object* shared = a.get();
  for (int i = 0; i < 100; ++i) b.push_back(Leaf(2));  // grows past the shared capacity
  EXPECT_EQ(a.get(), shared);
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(b.size(), 104u);
  EXPECT_EQ(leaf.use_count(), 1 + 4 + 4);  // both arrays hold their own references
  // `a` is unique again: it grows in place and `b` does not see it.
  for (int i = 0; i < 100; ++i) a.push_back(Leaf(3));
  EXPECT_EQ(a.size(), 104u);
  EXPECT_EQ(a[4]->id, 3);
  EXPECT_EQ(b[4]->id, 2);
  EXPECT_EQ(leaf.use_count(), 1 + 4 + 4);
}

TEST(Array, AnArrayFromTheGenericAllocatorGrowsByCopying) {
  // Only blocks from ArrayAccess::New are realloc'ed; another ArrayObj grows the old way.
  Array<int64_t> a(make_inplace_array_object<ArrayObj, Any>(2, 2));
  for (int64_t i = 0; i < 100; ++i) a.push_back(i);
  EXPECT_EQ(a.size(), 100u);
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(a[99], 99);
}

TEST(Array, MillionDeepNestingFreesWithoutStackOverflow) {
  // Each array holds the previous one: releasing the outermost frees the million through the
  // release-depth guard, not by recursion.
  Array<Any> head;
  for (int i = 0; i < 1000000; ++i) {
    Array<Any> next;
    next.push_back(Any(std::move(head)));
    head = std::move(next);
  }
  head = Array<Any>();
  EXPECT_EQ(head.size(), 0u);
}

TEST(Array, InsertAndEraseRanges) {
  Array<int64_t> a = {1, 5};
  std::vector<int64_t> mid = {2, 3, 4};
  a.insert(a.begin() + 1, mid.begin(), mid.end());
  EXPECT_EQ(ToVector(a), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  auto it = a.erase(a.begin() + 1, a.begin() + 4);
  EXPECT_EQ(*it, 5);
  EXPECT_EQ(ToVector(a), (std::vector<int64_t>{1, 5}));
}

TEST(Array, ResizeAndAssignMayReadTheArrayItself) {
  // The fill value and the source range are this array's own cells, which growing moves.
  Array<Any> a;
  a.push_back(String("a string too long to be stored inline in the cell"));
  a.resize(100, a[0]);
  ASSERT_EQ(a.size(), 100);
  EXPECT_EQ(a[99].cast<String>(), "a string too long to be stored inline in the cell");
  Array<int64_t> b = {1, 2, 3, 4};
  b.assign(b.begin() + 1, b.end());
  EXPECT_EQ(ToVector(b), (std::vector<int64_t>{2, 3, 4}));
  Array<int64_t> c = {7, 8};
  c.assign(c.begin(), c.end());
  EXPECT_EQ(ToVector(c), (std::vector<int64_t>{7, 8}));
}

TEST(Array, HoldsObjectsAndReleasesThem) {
  Leaf leaf(1);
  {
    Array<Leaf> a = {leaf, leaf};
    EXPECT_EQ(leaf.use_count(), 3);
    Array<Leaf> b = a;
    b.push_back(leaf);  // copies the two cells: two more references, plus the new one
    EXPECT_EQ(leaf.use_count(), 6);
    EXPECT_EQ(b[2]->id, 1);
  }
  EXPECT_EQ(leaf.use_count(), 1);
}

TEST(Array, BadIndicesAreIndexErrors) {
  Array<int64_t> a = {1, 2, 3};
  ExpectError([&] { (void)a[3]; }, "IndexError", {"index 3", "size 3"});
  ExpectError([&] { (void)a[-1]; }, "IndexError", {"index -1", "size 3"});
  ExpectError([&] { a.Set(5, 1); }, "IndexError", {"index 5"});
  ExpectError([&] { a.insert(a.begin() + 4, 1); }, "IndexError", {"index 4"});
  Array<int64_t> empty;
  ExpectError([&] { (void)empty.front(); }, "IndexError", {"size 0"});
  ExpectError([&] { empty.pop_back(); }, "IndexError", {"size 0"});
  EXPECT_EQ(ToVector(a), (std::vector<int64_t>{1, 2, 3})) << "failed mutations change nothing";
}

TEST(Array, ContainersOfContainers) {
  Array<Array<int64_t>> grid = {{1, 2}, {3}};
  Array<Array<int64_t>> copy = grid;
  Array<int64_t> row = copy[1];
  row.push_back(4);
  copy.Set(1, row);
  EXPECT_EQ(grid[1].size(), 1u);
  EXPECT_EQ(copy[1].size(), 2u);

  Map<String, Array<int64_t>> by_name = {{"a", {1}}, {"b", {2, 3}}};
  Array<Map<String, Array<int64_t>>> nested = {by_name, by_name};
  Any boxed = nested;
  auto back = boxed.cast<Array<Map<String, Array<int64_t>>>>();
  EXPECT_EQ(back[1].at("b")[1], 3);
}

// Typed views of untyped arrays, as a Function receives them from Python.
TEST(Array, UntypedArrayConvertsWhenEveryElementDoes) {
  Array<Any> untyped = {Any(1), Any(2), Any(3)};
  Any boxed = untyped;
  Array<int64_t> typed = boxed.cast<Array<int64_t>>();
  EXPECT_TRUE(typed.same_as(untyped)) << "conversion checks, it does not copy";
  EXPECT_EQ(typed[2], 3);
  auto doubles = boxed.cast<Array<double>>();
  EXPECT_EQ(doubles[0], 1.0);
}

TEST(Array, ConversionFailureNamesTheElement) {
  Any boxed = Array<Any>{Any(1), Any("two"), Any(3)};
  ExpectError(
      [&] { boxed.cast<Array<int64_t>>(); }, "TypeError",
      {"expected Array[int] but got ferry.Array", "element 1: expected int but got ferry.String"});
  Any nested = Array<Any>{Any(Array<Any>{Any(1)}), Any(Array<Any>{Any(2), Any(2.5)})};
  ExpectError([&] { nested.cast<Array<Array<int64_t>>>(); }, "TypeError",
              {"element 1: expected Array[int] but got ferry.Array (element 1: expected int "
               "but got float)"});
  Any small = Array<Any>{Any(1), Any(300)};
  ExpectError([&] { small.cast<Array<int8_t>>(); }, "TypeError",
              {"element 1: integer 300 is out of range for int8"});
  EXPECT_FALSE(Any(5).as<Array<int64_t>>().has_value());
}

TEST(Array, TypedFunctionArgumentsConvertAndReportTheIndex) {
  Function sum = Function::FromTyped(
      [](Array<int64_t> xs) {
        int64_t total = 0;
        for (int64_t x : xs) total += x;
        return total;
      },
      "sum");
  EXPECT_EQ(sum(Array<Any>{Any(1), Any(2), Any(3)}).cast<int64_t>(), 6);
  ExpectError(
      [&] {
        sum(Array<Any>{Any(1), Any(2), Any("x")});
      },
      "TypeError", {"argument 0", "sum(0: Array[int]) -> int", "element 2: expected int"});
  ExpectError([&] { sum(3); }, "TypeError", {"expected Array[int] but got int"});
}

// ---------------------------------------------------------------------------------------------
// Map

std::vector<std::string> Keys(const Map<String, int64_t>& m) {
  std::vector<std::string> keys;
  for (auto [key, value] : m) keys.push_back(std::string(key));
  return keys;
}

TEST(Map, SetGetAndCount) {
  Map<String, int64_t> m;
  EXPECT_TRUE(m.same_as(Map<String, int64_t>()));
  m.Set("a", 1);
  m.Set("b", 2);
  m.Set("a", 3);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("a"), 3);
  EXPECT_EQ(m["b"], 2);
  EXPECT_EQ(m.count("b"), 1u);
  EXPECT_EQ(m.count("z"), 0u);
  EXPECT_FALSE(m.Get("z").has_value());
  EXPECT_EQ(m.Get("b").value(), 2);
  EXPECT_EQ((*m.find("a")).second, 3);
  EXPECT_EQ(m.find("nope"), m.end());
}

TEST(Map, MutationThroughOneHandleIsNeverSeenThroughAnother) {
  Map<String, int64_t> m = {{"a", 1}, {"b", 2}};
  Map<String, int64_t> n = m;
  n.Set("c", 3);
  n.Set("a", 10);
  n.erase("b");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("a"), 1);
  EXPECT_EQ(m.count("c"), 0u);
  EXPECT_EQ(Keys(n), (std::vector<std::string>{"a", "c"}));
  Map<String, int64_t> o = n;
  o.clear();
  EXPECT_EQ(n.size(), 2u);
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(n.erase("missing"), 0u);
}

TEST(Map, KeepsInsertionOrderThroughInsertsAndErases) {
  Map<String, int64_t> m;
  for (const char* key : {"d", "b", "a", "c", "e"}) m.Set(key, 0);
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"d", "b", "a", "c", "e"}));
  m.erase("b");
  m.erase("e");
  m.Set("a", 5);  // overwriting keeps the place
  m.Set("b", 1);  // re-inserting goes to the end
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"d", "a", "c", "b"}));
  Map<String, int64_t> copy = m;
  copy.Set("z", 9);  // the copy keeps the order, compacted
  EXPECT_EQ(Keys(copy), (std::vector<std::string>{"d", "a", "c", "b", "z"}));
}

TEST(Map, KeysCompareByValueForStringsAndPlainValuesByIdentityForObjects) {
  Map<Any, Any> m;
  m.Set(Any(1), Any("int"));
  m.Set(Any(true), Any("bool"));
  m.Set(Any(1.0), Any("float"));
  m.Set(Any("long key, stored as a String object"), Any(1));
  m.Set(Any("short"), Any(2));
  m.Set(Any(DataType("float32")), Any(3));
  EXPECT_EQ(m.size(), 6u) << "1, True and 1.0 are different keys";
  EXPECT_EQ(m.at(1).cast<std::string>(), "int");
  EXPECT_EQ(m.at(true).cast<std::string>(), "bool");
  EXPECT_EQ(m.at(1.0).cast<std::string>(), "float");
  // Every form of a string finds it: a C string, an inline string, a String object.
  EXPECT_EQ(m.at("long key, stored as a String object").cast<int64_t>(), 1);
  EXPECT_EQ(m.at(String("short")).cast<int64_t>(), 2);
  EXPECT_EQ(m.at(std::string("short")).cast<int64_t>(), 2);
  EXPECT_EQ(m.at(DataType("float32")).cast<int64_t>(), 3);

  Leaf a(1), b(1);
  Map<Leaf, int64_t> objects = {{a, 1}};
  EXPECT_EQ(objects.count(a), 1u);
  EXPECT_EQ(objects.count(b), 0u) << "objects other than strings are keys by identity";

  Map<Any, int64_t> zeros = {{Any(0.0), 1}};
  EXPECT_EQ(zeros.at(-0.0), 1) << "-0.0 == 0.0";
}

TEST(Map, BytesKeysCompareByContentAndStayApartFromStrings) {
  // Bytes keys were compared by identity: setting Bytes("a") twice made two entries, and a
  // Map built with one Bytes("a") could not be read with another.
  const std::string with_nul("long bytes key with a \0 inside it", 34);
  Map<Any, int64_t> m;
  m.Set(Any(Bytes("a")), 1);
  m.Set(Any(Bytes("a")), 2);
  m.Set(Any(Bytes(with_nul)), 3);
  m.Set(Any(Bytes("")), 4);
  EXPECT_EQ(m.size(), 3u) << "a second Bytes with the same content is the same key";
  EXPECT_EQ(m.at(Bytes("a")), 2);
  EXPECT_EQ(m.at(Bytes(with_nul)), 3);
  EXPECT_EQ(m.at(Bytes()), 4);
  EXPECT_EQ(m.count(Bytes(with_nul.substr(0, 20))), 0u) << "a prefix is another key";
  // A string with the same characters is another key, as "a" != b"a" in Python.
  EXPECT_EQ(m.count("a"), 0u);
  EXPECT_EQ(m.count(String("")), 0u);
  m.Set(Any("a"), 5);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m.at(Bytes("a")), 2);
  EXPECT_EQ(m.at("a"), 5);
  EXPECT_EQ(m.erase(Bytes("a")), 1u);
  EXPECT_EQ(m.count(Bytes("a")), 0u);
  EXPECT_EQ(m.at("a"), 5);

  Dict<Bytes, int64_t> d;
  d.Set(Bytes("key"), 1);
  d.Set(Bytes("key"), 2);
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(d.at(Bytes("key")), 2);
  // Many keys: every one found through a copy of its content, none found twice.
  Map<Bytes, int64_t> many;
  for (int64_t i = 0; i < 1000; ++i) many.Set(Bytes("k" + std::to_string(i)), i);
  for (int64_t i = 0; i < 1000; ++i) many.Set(Bytes("k" + std::to_string(i)), -i);
  EXPECT_EQ(many.size(), 1000u);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(many.at(Bytes("k" + std::to_string(i))), -i);
}

TEST(Map, ANaNKeyIsAValueErrorAndChangesNothing) {
  // Every NaN key was one key (equal bits compared equal), so a Python dict with two NaN keys
  // lost an entry on its way into a Map. Values have no identity to keep NaNs apart by, so a
  // NaN key is refused.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Map<Any, Any> m = {{Any(1.5), Any(1)}};
  Map<Any, Any> shared = m;
  ExpectError([&] { m.Set(Any(nan), Any(2)); }, "ValueError", {"NaN map key"});
  ExpectError([&] { m.Set(Any(-nan), Any(2)); }, "ValueError", {"NaN map key"});
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(shared.size(), 1u);
  EXPECT_EQ(m.count(nan), 0u);
  ExpectError([&] { m.at(nan); }, "KeyError", {"nan"});
  Dict<Any, Any> d;
  ExpectError([&] { d.Set(Any(nan), Any(2)); }, "ValueError", {"NaN map key"});
  EXPECT_TRUE(d.empty());
  m.Set(Any(std::numeric_limits<double>::infinity()), Any(3));  // other floats are keys
  EXPECT_EQ(m.size(), 2u);
}

TEST(Map, MissingKeysAreKeyErrorsNamingTheKey) {
  Map<String, int64_t> m = {{"a", 1}};
  ExpectError([&] { m.at("missing"); }, "KeyError", {"key \"missing\"", "size 1"});
  Map<int64_t, int64_t> ints = {{1, 1}};
  ExpectError([&] { ints.at(42); }, "KeyError", {"key 42"});
  ExpectError([&] { m.Get("missing").value(); }, "ValueError", {"Optional[int] has no value"});
}

TEST(Map, ReservingMoreThanAMapCanHoldIsAMemoryError) {
  Map<int64_t, int64_t> m = {{1, 1}};
  ExpectError([&] { m.reserve(SIZE_MAX / 2); }, "MemoryError", {"cannot reserve"});
  ExpectError([&] { m.reserve(size_t{1} << 32); }, "MemoryError", {"cannot reserve"});
  m.reserve(100);
  EXPECT_EQ(m.at(1), 1);
}

TEST(Map, TypedConversionFailuresNameTheKey) {
  Map<Any, Any> untyped = {{Any("a"), Any(1)}, {Any("b"), Any("two")}};
  Any boxed = untyped;
  ExpectError([&] { boxed.cast<Map<String, int64_t>>(); }, "TypeError",
              {"expected Map[ferry.String, int] but got ferry.Map",
               "value of key \"b\": expected int but got ferry.String"});
  ExpectError([&] { boxed.cast<Map<int64_t, Any>>(); }, "TypeError",
              {"key \"a\": expected int but got ferry.String"});
  auto typed = boxed.cast<Map<String, Any>>();
  EXPECT_TRUE(typed.same_as(untyped));
}

TEST(Map, HoldsAMillionEntries) {
  constexpr int64_t kCount = 1000000;
  Map<int64_t, int64_t> m;
  for (int64_t i = 0; i < kCount; ++i) m.Set(i, 2 * i);
  EXPECT_EQ(m.size(), static_cast<size_t>(kCount));
  for (int64_t i = 0; i < kCount; i += 997) ASSERT_EQ(m.at(i), 2 * i);
  for (int64_t i = 0; i < kCount; i += 2) m.erase(i);
  EXPECT_EQ(m.size(), static_cast<size_t>(kCount / 2));
  int64_t expected = 1;
  for (auto [key, value] : m) {
    ASSERT_EQ(key, expected);
    ASSERT_EQ(value, 2 * expected);
    expected += 2;
  }
  EXPECT_EQ(m.count(2), 0u);
  EXPECT_EQ(m.count(3), 1u);
}

TEST(Map, ErasesKeepEveryOtherKeyReachable) {
  // Many keys in few slots exercise the backward-shift deletion of the probe runs.
  Map<int64_t, int64_t> m;
  std::map<int64_t, int64_t> model;
  uint64_t state = 12345;
  for (int step = 0; step < 20000; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t key = static_cast<int64_t>((state >> 33) % 64);
    if ((state >> 20) % 3 == 0) {
      m.erase(key);
      model.erase(key);
    } else {
      m.Set(key, step);
      model[key] = step;
    }
  }
  ASSERT_EQ(m.size(), model.size());
  for (auto [key, value] : model) ASSERT_EQ(m.at(key), value) << key;
}

TEST(Map, ConstructsFromStandardMaps) {
  std::unordered_map<std::string, int64_t> source = {{"x", 1}, {"y", 2}};
  Map<String, int64_t> m(source.begin(), source.end());
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("y"), 2);
}

// ---------------------------------------------------------------------------------------------
// Optional, Variant, Shape

TEST(Optional, OfAnObjectIsPointerSized) {
  static_assert(sizeof(Optional<String>) == sizeof(String), "one cell: None or the String's");
  static_assert(sizeof(Optional<Array<int64_t>>) == sizeof(void*));
  Optional<String> none;
  EXPECT_FALSE(none.has_value());
  EXPECT_TRUE(none == nullptr);
  Optional<String> name = String("ferry");
  EXPECT_EQ(*name, "ferry");
  EXPECT_EQ(name.value().size(), 5u);
  EXPECT_EQ(none.value_or("default"), "default");
  ExpectError([&] { none.value(); }, "ValueError", {"Optional[ferry.String]"});
}

TEST(Optional, TravelsAsTheValueOrNone) {
  Function f =
      Function::FromTyped([](Optional<int64_t> x) { return x.has_value() ? *x * 2 : -1; }, "f");
  EXPECT_EQ(f(21).cast<int64_t>(), 42);
  EXPECT_EQ(f(nullptr).cast<int64_t>(), -1);
  ExpectError([&] { f("x"); }, "TypeError", {"expected Optional[int] but got ferry.String"});
  Any none = Optional<String>();
  EXPECT_TRUE(none.is_none());
  Any some = Optional<String>(String("s"));
  EXPECT_EQ(some.cast<String>(), "s");
}

TEST(Variant, HoldsOneOfItsTypes) {
  using IntOrString = Variant<int64_t, String>;
  IntOrString v = String("text");
  EXPECT_TRUE(v.is<String>());
  EXPECT_FALSE(v.is<int64_t>());
  EXPECT_EQ(v.index(), 1u);
  EXPECT_EQ(v.get<String>(), "text");
  EXPECT_FALSE(v.as<int64_t>().has_value());
  ExpectError([&] { v.get<int64_t>(); }, "TypeError", {"expected int but got ferry.String"});

  Function describe = Function::FromTyped(
      [](IntOrString x) { return x.is<int64_t>() ? std::string("int") : std::string("string"); },
      "describe");
  EXPECT_EQ(describe(3).cast<std::string>(), "int");
  EXPECT_EQ(describe("s").cast<std::string>(), "string");
  ExpectError([&] { describe(2.5); }, "TypeError",
              {"expected Variant[int, ferry.String] but got float"});
}

TEST(Shape, IsAnImmutableArrayOfDimensions) {
  Shape s = {2, 3, 4};
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1], 3);
  EXPECT_EQ(s.Product(), 24);
  EXPECT_EQ(Shape().Product(), 1);
  EXPECT_EQ(s, Shape(std::vector<int64_t>{2, 3, 4}));
  EXPECT_NE(s, Shape({2, 3}));
  ExpectError([&] { (void)s[3]; }, "IndexError", {"index 3", "size 3"});
  ExpectError(
      [&] {
        Shape({int64_t{1} << 40, int64_t{1} << 40}).Product();
      },
      "OverflowError", {"overflows"});
  std::ostringstream os;
  os << s << Shape({5});
  EXPECT_EQ(os.str(), "(2, 3, 4)(5,)");
}

TEST(Shape, ArgumentsAcceptArraysOfInts) {
  Function numel = Function::FromTyped([](Shape s) { return s.Product(); }, "numel");
  EXPECT_EQ(numel(Shape({2, 5})).cast<int64_t>(), 10);
  EXPECT_EQ(numel(Array<Any>{Any(3), Any(4)}).cast<int64_t>(), 12);
  ExpectError(
      [&] {
        numel(Array<Any>{Any(3), Any(0.5)});
      },
      "TypeError", {"element 1: expected int but got float"});
}

// ---------------------------------------------------------------------------------------------
// Globals used by other languages

TEST(ContainerGlobals, BuildAndReadArraysMapsAndShapes) {
  Function make_array = Function::GetGlobalRequired("ferry.Array");
  Any array = make_array(1, "two", 3.0);
  EXPECT_EQ(Function::GetGlobalRequired("ferry.ArraySize")(array).cast<int64_t>(), 3);
  Function get_item = Function::GetGlobalRequired("ferry.ArrayGetItem");
  EXPECT_EQ(get_item(array, 1).cast<std::string>(), "two");
  EXPECT_EQ(get_item(array, -1).cast<double>(), 3.0);
  ExpectError([&] { get_item(array, 3); }, "IndexError", {"index 3", "size 3"});
  ExpectError([&] { get_item(5, 0); }, "TypeError", {"expected ferry.Array but got int"});

  Function make_map = Function::GetGlobalRequired("ferry.Map");
  Any map = make_map("b", 1, "a", 2);
  EXPECT_EQ(Function::GetGlobalRequired("ferry.MapSize")(map).cast<int64_t>(), 2);
  EXPECT_EQ(Function::GetGlobalRequired("ferry.MapGetItem")(map, "a").cast<int64_t>(), 2);
  EXPECT_EQ(Function::GetGlobalRequired("ferry.MapCount")(map, "z").cast<int64_t>(), 0);
  ExpectError([&] { Function::GetGlobalRequired("ferry.MapGetItem")(map, "z"); }, "KeyError",
              {"key \"z\""});
  ExpectError([&] { make_map("lonely"); }, "ValueError", {"pairs"});
  auto keys = Function::GetGlobalRequired("ferry.MapKeys")(map).cast<Array<String>>();
  EXPECT_EQ(keys[0], "b");
  auto items = Function::GetGlobalRequired("ferry.MapItems")(map).cast<Array<Any>>();
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[3].cast<int64_t>(), 2);

  Any shape = Function::GetGlobalRequired("ferry.Shape")(2, 3);
  EXPECT_EQ(shape.cast<Shape>().Product(), 6);
  auto dims = Function::GetGlobalRequired("ferry.ShapeToArray")(shape).cast<Array<int64_t>>();
  EXPECT_EQ(dims[1], 3);
  ExpectError([&] { Function::GetGlobalRequired("ferry.Shape")(2, "x"); }, "TypeError",
              {"dimension 1 must be an int"});
}

}  // namespace
