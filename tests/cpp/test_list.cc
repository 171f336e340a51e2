// Tests of ferry/container/list.h and dict.h: mutation seen by every holder, the std-like API,
// conversions to and from Array and Map, errors, structural equality and hashing, JSON, and a
// List that holds itself.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <cstddef>  // ptrdiff_t
#include <cstdint>
#include <cstdlib>   // std::exit in death tests
#include <iterator>  // iterator traits, distance, advance
#include <string>
#include <type_traits>
#include <utility>  // pair
#include <vector>

#include "test_util.h"

namespace {

using namespace ferry;
using ferry_test::ExpectError;

TEST(List, TheDataClassesAreNodesAndKeepTheirOlderNames) {
  // ListNode and DictNode list reflected fields, so they are nodes (docs/object_model.md).
  static_assert(std::is_same_v<ListObj, ListNode> && std::is_same_v<DictObj, DictNode>);
  EXPECT_NE(GetNodeInfo(List<Any>().get()), nullptr);
  EXPECT_NE(GetNodeInfo(Dict<Any, Any>().get()), nullptr);
}

TEST(List, AMutationIsSeenByEveryHolder) {
  List<int64_t> xs = {1, 2};
  List<int64_t> same = xs;
  ObjectRef erased = xs;
  same.push_back(3);
  EXPECT_EQ(xs.size(), 3u);
  EXPECT_EQ(Downcast<List<int64_t>>(erased)[2], 3);
  Any cell = xs;  // through Any too
  cell.cast<List<int64_t>>().Set(0, 10);
  EXPECT_EQ(xs[0], 10);
}

TEST(List, VectorLikeApi) {
  List<String> xs;
  EXPECT_TRUE(xs.empty());
  xs.push_back("b");
  xs.insert(0, "a");
  xs.insert(2, "d");
  xs.insert(2, "c");
  std::vector<std::string> seen;
  for (String s : xs) seen.push_back(std::string(s));
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
  xs.erase(1);
  EXPECT_EQ(xs.at(1), "c");
  xs.erase(0, 2);
  EXPECT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs.front(), "d");
  xs.pop_back();
  EXPECT_TRUE(xs.empty());
  xs.resize(3, "z");
  EXPECT_EQ(xs.back(), "z");
  xs.clear();
  EXPECT_EQ(xs.size(), 0u);
  ExpectError([&] { xs.pop_back(); }, "IndexError", {});
  ExpectError([&] { xs.at(0); }, "IndexError", {"0"});
  ExpectError([&] { xs.insert(5, "x"); }, "IndexError", {"5"});
  ExpectError([&] { xs.erase(0); }, "IndexError", {});
}

TEST(List, ArraySnapshotsNeverChange) {
  List<int64_t> xs = {1, 2, 3};
  Array<int64_t> snap = xs.ToArray();
  xs.push_back(4);
  xs.Set(0, 100);
  EXPECT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[0], 1);
  List<int64_t> from(snap);  // a new list: the array is copied on its first write
  from.push_back(9);
  EXPECT_EQ(snap.size(), 3u);
  EXPECT_EQ(from.size(), 4u);
}

TEST(List, AListParameterTakesAnArrayAsACopyAndChecksElements) {
  Function append = Function::FromTyped([](List<int64_t> xs) {
    xs.push_back(7);
    return static_cast<int64_t>(xs.size());
  });
  Array<int64_t> array = {1, 2};
  EXPECT_EQ(append(array).cast<int64_t>(), 3);
  EXPECT_EQ(array.size(), 2u);  // the caller's Array is not mutated
  List<int64_t> list = {1, 2};
  EXPECT_EQ(append(list).cast<int64_t>(), 3);
  EXPECT_EQ(list.size(), 3u);  // a List is shared
  List<Any> mixed = {Any(1), Any("two")};
  ExpectError([&] { append(mixed); }, "TypeError", {"List[int]", "element 1"});
  ExpectError([&] { append(3); }, "TypeError", {"List[int]"});
}

/// The sum and count a range-for over `xs` sees while `body` (called with each element) may
/// write the list; exits 0 when they match `expected`, so a crash fails the EXPECT_EXIT around
/// it instead of the whole test binary.
/// (std::_Exit, as every death-test child here: it leaves holding its objects, and no exit-time
/// check such as FERRY_LEAK_CHECK should judge a test cut short.)
template <typename Body>
[[noreturn]] void LoopAndExit(List<int64_t> xs, Body body, int64_t expected_sum) {
  int64_t sum = 0;
  for (int64_t x : xs) {
    sum += x;
    body(x);
  }
  std::_Exit(sum == expected_sum ? 0 : 1);
}

TEST(List, ALoopWhoseCallbackClearsOrGrowsTheListNeitherCrashesNorSeesTheChange) {
  // The loop walked the list's storage through raw pointers: a callback that cleared the list
  // freed the cells under it (a segfault; a heap-use-after-free under ASan). Iterators now keep
  // the storage they began with, so the loop sees the elements as they were.
  List<int64_t> xs = {1, 2, 3, 4};
  Function clear = Function::FromTyped([](List<int64_t> list) { list.clear(); });
  EXPECT_EXIT(LoopAndExit(
                  xs, [&](int64_t) { clear(xs); }, 10),
              ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(LoopAndExit(
                  xs, [&](int64_t x) { xs.push_back(x); }, 10),
              ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(LoopAndExit(
                  xs, [&](int64_t) { xs.erase(0); }, 10),
              ::testing::ExitedWithCode(0), "");
  // In this process too, with the writes checked after the loop.
  List<Any> ys = {Any(1), Any("two"), Any(List<Any>{Any(3)})};
  std::vector<std::string> seen;
  for (const Any& y : ys) {
    seen.push_back(Repr(y));
    ys.clear();
    ys.push_back(Any("new"));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "\"two\"", "ferry.List(data=[3])"}));
  EXPECT_EQ(ys.size(), 1u);
  // A write between begin() and end() does not make the walk run past its storage.
  List<int64_t> zs = {1, 2};
  auto it = zs.begin();
  zs.clear();
  int64_t count = 0;
  for (; it != zs.end(); ++it) count += *it;
  EXPECT_EQ(count, 3);
  EXPECT_TRUE(zs.begin() == zs.end());
}

/// Loops over a dict whose body grows the entry table (reallocating it) and erases; exits 0
/// when the loop saw the entries it began with.
[[noreturn]] void GrowDictWhileLoopingAndExit() {
  Dict<int64_t, int64_t> d = {{1, 10}, {2, 20}, {3, 30}};
  int64_t sum = 0;
  for (auto [key, value] : d) {
    sum += value;
    for (int64_t k = 0; k < 200; ++k) d.Set(100 + key * 1000 + k, k);
    d.erase(key);
  }
  std::_Exit(sum == 60 && d.size() == 600 ? 0 : 1);
}

/// Loops over a dict whose body clears it; exits 0 when the loop saw both keys.
[[noreturn]] void ClearDictWhileLoopingAndExit() {
  Dict<String, int64_t> d = {{"a", 1}, {"b", 2}};
  std::string keys;
  for (auto [key, value] : d) {
    keys += std::string(key);
    d.clear();
  }
  std::_Exit(keys == "ab" && d.empty() ? 0 : 1);
}

TEST(Dict, ALoopWhoseBodyClearsOrGrowsTheDictNeitherCrashesNorSeesTheChange) {
  // As for List: the loop walked the entry table, which a Set that grew it reallocated and a
  // clear emptied.
  EXPECT_EXIT(GrowDictWhileLoopingAndExit(), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(ClearDictWhileLoopingAndExit(), ::testing::ExitedWithCode(0), "");
  Dict<String, int64_t> d = {{"a", 1}, {"b", 2}};
  auto found = d.find("b");
  d.clear();
  ASSERT_NE(found, d.end());
  EXPECT_EQ((*found).second, 2);
  EXPECT_EQ(found.value().cast<int64_t>(), 2);
  EXPECT_EQ(++found, d.end());
  EXPECT_EQ(d.find("b"), d.end());
}

/// The iterator contract List and Dict share (details::SnapshotIterator), on `c` holding `n`
/// items: a forward iterator; a default one is the end() sentinel, which every iterator equals
/// once its own snapshot is exhausted; post-increment returns the old place; walks begun on
/// the same storage are at the same places, and one begun after `write` walks the new storage.
template <typename Container, typename Write>
void ExpectSnapshotIteratorContract(Container c, Write write, std::ptrdiff_t n) {
  using It = typename Container::iterator;
  static_assert(std::is_same_v<typename std::iterator_traits<It>::iterator_category,
                               std::forward_iterator_tag>);
  EXPECT_TRUE(It() == It());
  EXPECT_TRUE(It() == c.end());
  It first = c.begin();
  EXPECT_TRUE(first == c.begin());
  EXPECT_FALSE(first == c.end());
  It old = first++;
  EXPECT_TRUE(old == c.begin());
  EXPECT_TRUE(old != first);
  write(c);
  EXPECT_TRUE(old != c.begin()) << "a walk begun after the write walks the copied storage";
  EXPECT_EQ(std::distance(old, c.end()), n) << "the walk begun before the write";
  EXPECT_EQ(std::distance(c.begin(), It()), n + 1);
  It last = old;
  std::advance(last, n);
  EXPECT_TRUE(last == c.end() && c.end() == last && last == It());
}

TEST(List, ListAndDictIteratorsKeepOneContract) {
  static_assert(std::is_same_v<List<int64_t>::iterator::value_type, int64_t>);
  static_assert(std::is_same_v<List<int64_t>::iterator::reference, int64_t>);
  static_assert(std::is_same_v<List<Any>::iterator::reference, const Any&>);
  static_assert(
      std::is_same_v<Dict<String, int64_t>::iterator::value_type, std::pair<String, int64_t>>);
  static_assert(
      std::is_same_v<Dict<String, int64_t>::iterator::reference, std::pair<String, int64_t>>);
  ExpectSnapshotIteratorContract(
      List<int64_t>{1, 2, 3}, [](List<int64_t>& l) { l.push_back(4); }, 3);
  ExpectSnapshotIteratorContract(
      Dict<String, int64_t>{{"a", 1}, {"b", 2}, {"c", 3}},
      [](Dict<String, int64_t>& d) { d.Set("d", 4); }, 3);
  Dict<String, int64_t> d = {{"a", 1}};
  auto it = d.begin();
  EXPECT_EQ(it.key().cast<std::string>(), "a");
  EXPECT_EQ(it.value().cast<int64_t>(), 1);
}

/// The TypeTraits List and Dict share (details::MutableContainerTraits), on `echo` (a typed
/// function returning its `C` argument): the container itself passes shared; its immutable
/// `storage` passes as a new container holding a copy; items of the wrong type and values of
/// another type are TypeErrors naming the expected type.
template <typename C, typename Storage>
void ExpectMutableContainerTraits(C c, Storage storage, const AnyView& bad_items,
                                  const char* type_str, const char* bad_detail) {
  Function echo = Function::FromTyped([](C x) { return x; });
  EXPECT_EQ(TypeTraits<C>::TypeStr(), type_str);
  EXPECT_TRUE(echo(c).template cast<C>().same_as(c)) << "the container passes shared";
  C copy = echo(storage).template cast<C>();
  EXPECT_FALSE(copy.same_as(storage));
  EXPECT_EQ(copy.size(), storage.size());
  copy.clear();
  EXPECT_NE(storage.size(), 0u) << "the storage passed in does not see the copy's writes";
  ExpectError([&] { echo(bad_items); }, "TypeError", {type_str, bad_detail});
  ExpectError([&] { echo(1.5); }, "TypeError", {type_str, "float"});
  EXPECT_FALSE(AnyView(bad_items).try_cast<C>().has_value());
}

TEST(List, ListAndDictTypeTraitsKeepOneContract) {
  ExpectMutableContainerTraits(List<int64_t>{1, 2}, Array<int64_t>{1, 2},
                               List<Any>{Any(1), Any("x")}, "List[int]",
                               "(element 1: expected int but got ferry.String)");
  ExpectMutableContainerTraits(Dict<String, int64_t>{{"a", 1}}, Map<String, int64_t>{{"a", 1}},
                               Dict<Any, Any>{{Any("a"), Any("x")}}, "Dict[ferry.String, int]",
                               "(value of key \"a\": expected int but got ferry.String)");
}

TEST(Dict, AMutationIsSeenByEveryHolder) {
  Dict<String, int64_t> d = {{"a", 1}};
  Dict<String, int64_t> same = d;
  same.Set("b", 2);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.at("b"), 2);
  EXPECT_EQ(d.count("a"), 1u);
  EXPECT_TRUE(d.contains("a"));
  EXPECT_EQ(d.erase("a"), 1u);
  EXPECT_EQ(d.erase("a"), 0u);
  EXPECT_FALSE(same.contains("a"));
  EXPECT_FALSE(d.Get("zz").has_value());
  ExpectError([&] { d.at("zz"); }, "KeyError", {"zz"});
  d.Set("c", 3);
  std::vector<std::string> keys;
  for (auto [k, v] : d) keys.push_back(std::string(k));
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "c"}));
  EXPECT_NE(d.find("c"), d.end());
  d.clear();
  EXPECT_TRUE(same.empty());
}

TEST(Dict, MapSnapshotsAndConversions) {
  Dict<String, int64_t> d = {{"a", 1}};
  Map<String, int64_t> snap = d.ToMap();
  d.Set("b", 2);
  EXPECT_EQ(snap.size(), 1u);
  Function set = Function::FromTyped([](Dict<String, int64_t> x) { x.Set("k", 1); });
  Map<String, int64_t> map = {{"a", 1}};
  set(map);
  EXPECT_EQ(map.size(), 1u);  // a Map argument is copied into a new Dict
  set(d);
  EXPECT_EQ(d.at("k"), 1);  // a Dict is shared
  ExpectError([&] { set(Dict<Any, Any>{{Any(1), Any(2)}}); }, "TypeError", {"Dict[", "key"});
}

TEST(Dict, AgreesWithAModelUnderInsertsErasesAndLookups) {
  // Integer keys hash by value and the search is perturbed (container.cc); erased keys leave
  // tombstones that inserts reuse. A reference model checks contents and insertion order
  // through growth, churn and key patterns that an identity hash would pile up.
  Dict<int64_t, int64_t> d;
  std::vector<std::pair<int64_t, int64_t>> model;  // in insertion order
  auto find = [&](int64_t key) {
    for (size_t k = 0; k < model.size(); ++k) {
      if (model[k].first == key) return static_cast<int64_t>(k);
    }
    return int64_t{-1};
  };
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  const int64_t patterns[] = {1, int64_t{1} << 21, int64_t{1} << 32, -1, 7919};
  for (int round = 0; round < 6000; ++round) {
    const int64_t key = static_cast<int64_t>(next() % 300) * patterns[round % 5];
    const uint64_t op = next() % 3;
    if (op == 0) {
      d.Set(key, round);
      const int64_t at = find(key);
      if (at < 0) {
        model.emplace_back(key, round);
      } else {
        model[static_cast<size_t>(at)].second = round;  // overwriting keeps the place
      }
    } else if (op == 1) {
      const int64_t at = find(key);
      ASSERT_EQ(d.erase(key), at < 0 ? 0u : 1u);
      if (at >= 0) model.erase(model.begin() + at);
    } else {
      const int64_t at = find(key);
      ASSERT_EQ(d.count(key), at < 0 ? 0u : 1u);
      if (at >= 0) {
        ASSERT_EQ(d.at(key), model[static_cast<size_t>(at)].second);
      }
    }
  }
  ASSERT_EQ(d.size(), model.size());
  size_t k = 0;
  for (auto [key, value] : d) {
    EXPECT_EQ(key, model[k].first);
    EXPECT_EQ(value, model[k].second);
    ++k;
  }
  // An int, a bool and a float holding the same number are three keys; int64 extremes work.
  Dict<Any, Any> mixed;
  mixed.Set(Any(1), Any("int"));
  mixed.Set(Any(true), Any("bool"));
  mixed.Set(Any(1.0), Any("float"));
  mixed.Set(Any(INT64_MIN), Any("min"));
  mixed.Set(Any(INT64_MAX), Any("max"));
  EXPECT_EQ(mixed.size(), 5u);
  EXPECT_EQ(mixed.at(1).cast<String>(), "int");
  EXPECT_EQ(mixed.at(true).cast<String>(), "bool");
  EXPECT_EQ(mixed.at(1.0).cast<String>(), "float");
  EXPECT_EQ(mixed.at(INT64_MIN).cast<String>(), "min");
  EXPECT_EQ(mixed.at(INT64_MAX).cast<String>(), "max");
  ExpectError([&] { mixed.at(2); }, "KeyError", {"2"});
}

TEST(ListDict, TheGlobalsOtherLanguagesUseWorkAndNameBadArguments) {
  auto global = [](const char* name) { return Function::GetGlobalRequired(name); };
  List<Any> xs = global("ferry.List")(1, "b").cast<List<Any>>();
  global("ferry.ListInsert")(xs, 0, 0);
  global("ferry.ListErase")(xs, 1, 2);
  EXPECT_EQ(xs.size(), 2u);
  EXPECT_EQ(xs[1].cast<String>(), "b");
  EXPECT_EQ(global("ferry.ListToArray")(xs).cast<Array<Any>>().size(), 2u);
  global("ferry.ListClear")(xs);
  EXPECT_TRUE(xs.empty());
  Dict<Any, Any> d = global("ferry.Dict")("k", 1).cast<Dict<Any, Any>>();
  global("ferry.DictSetItem")(d, "j", 2);
  EXPECT_EQ(global("ferry.DictSize")(d).cast<int64_t>(), 2);
  EXPECT_EQ(global("ferry.DictGetItem")(d, "j").cast<int64_t>(), 2);
  EXPECT_EQ(global("ferry.DictCount")(d, "k").cast<int64_t>(), 1);
  EXPECT_EQ(global("ferry.DictErase")(d, "k").cast<int64_t>(), 1);
  EXPECT_EQ(global("ferry.DictErase")(d, "k").cast<int64_t>(), 0);
  using AnyMap = Map<Any, Any>;
  EXPECT_EQ(global("ferry.DictToMap")(d).cast<AnyMap>().size(), 1u);
  global("ferry.DictClear")(d);
  EXPECT_TRUE(d.empty());
  // Errors name the function and what was wrong.
  ExpectError([&] { global("ferry.ListInsert")(d, 0, 0); }, "TypeError",
              {"ferry.ListInsert", "expected ferry.List", "ferry.Dict"});
  ExpectError([&] { global("ferry.ListErase")(xs, 0); }, "TypeError",
              {"ferry.ListErase", "3 arguments", "2"});
  ExpectError([&] { global("ferry.ListInsert")(xs, 5, 0); }, "IndexError", {"5"});
  ExpectError([&] { global("ferry.DictGetItem")(xs, "k"); }, "TypeError",
              {"ferry.DictGetItem", "expected ferry.Dict", "ferry.List"});
  ExpectError([&] { global("ferry.DictGetItem")(d, "zz"); }, "KeyError", {"zz"});
  ExpectError([&] { global("ferry.DictSetItem")(d, "k"); }, "TypeError",
              {"ferry.DictSetItem", "3 arguments"});
  ExpectError([&] { global("ferry.Dict")("k"); }, "ValueError", {"pairs", "1 argument"});
}

TEST(ListDict, TheContainerGlobalsShareOneArgumentCountError) {
  // ferry.Map* (container_globals.cc) and ferry.List*/Dict* (list.cc) had a check each; the
  // second said "takes 1 arguments". One check now, one message.
  auto global = [](const char* name) { return Function::GetGlobalRequired(name); };
  Dict<Any, Any> d;
  Map<Any, Any> m;
  ExpectError([&] { global("ferry.DictSize")(d, 1); }, "TypeError",
              {"ferry.DictSize() takes 1 argument but 2 were given"});
  ExpectError([&] { global("ferry.MapSize")(m, 1); }, "TypeError",
              {"ferry.MapSize() takes 1 argument but 2 were given"});
  ExpectError([&] { global("ferry.ListErase")(List<Any>()); }, "TypeError",
              {"ferry.ListErase() takes 3 arguments but 1 were given"});
  ExpectError([&] { global("ferry.MapGetItem")(m); }, "TypeError",
              {"ferry.MapGetItem() takes 2 arguments but 1 were given"});
}

TEST(ListDict, TheOneCallPerPythonOperationGlobalsFollowPythonRules) {
  auto global = [](const char* name) { return Function::GetGlobalRequired(name); };
  auto ints = [](const List<Any>& xs) {
    std::vector<int64_t> out;
    for (const Any& x : xs) out.push_back(x.cast<int64_t>());
    return out;
  };
  List<Any> xs = {Any(0), Any(1), Any(2), Any(3), Any(4)};
  global("ferry.ListSetSlice")(xs, 1, 3, nullptr, 7, 8, 9);  // xs[1:3] = [7, 8, 9]
  EXPECT_EQ(ints(xs), (std::vector<int64_t>{0, 7, 8, 9, 3, 4}));
  global("ferry.ListSetSlice")(xs, nullptr, nullptr, -2, 10, 11, 12);  // xs[::-2] = ...
  EXPECT_EQ(ints(xs), (std::vector<int64_t>{0, 12, 8, 11, 3, 10}));
  ExpectError([&] { global("ferry.ListSetSlice")(xs, nullptr, nullptr, 2, 1); }, "ValueError",
              {"size 1 to extended slice of size 3"});
  ExpectError([&] { global("ferry.ListDelSlice")(xs, nullptr, nullptr, 0); }, "ValueError",
              {"step cannot be zero"});
  global("ferry.ListDelSlice")(xs, -1, -6, -2);  // del xs[-1:-6:-2]: indexes 5, 3, 1
  EXPECT_EQ(ints(xs), (std::vector<int64_t>{0, 8, 3}));
  EXPECT_EQ(global("ferry.ListPop")(xs, -1).cast<int64_t>(), 3);
  ExpectError([&] { global("ferry.ListPop")(xs, 2); }, "IndexError", {"2", "size 2"});
  global("ferry.ListInsertClamped")(xs, -100, 5);
  global("ferry.ListInsertClamped")(xs, 100, 6);
  global("ferry.ListExtend")(xs, 1, 2);
  global("ferry.ListReverse")(xs);
  EXPECT_EQ(ints(xs), (std::vector<int64_t>{2, 1, 6, 8, 0, 5}));
  Array<Any> snapshot = xs.ToArray();
  EXPECT_TRUE(global("ferry.ListEraseIfUnchanged")(xs, snapshot, 0).cast<bool>());
  EXPECT_FALSE(global("ferry.ListReplaceIfUnchanged")(xs, snapshot, 1).cast<bool>());
  EXPECT_EQ(xs.size(), 5u);
  EXPECT_TRUE(global("ferry.ListReplaceIfUnchanged")(xs, xs.ToArray(), 1).cast<bool>());
  EXPECT_EQ(ints(xs), (std::vector<int64_t>{1}));

  Dict<Any, Any> d = {{Any("a"), Any(1)}, {Any("b"), Any(2)}, {Any("c"), Any(3)}};
  d.erase("c");
  auto array = [](const Any& v) { return v.cast<Array<Any>>(); };
  Array<Any> item = array(global("ferry.DictPopItem")(d));
  EXPECT_EQ(item[0].cast<String>(), "b");
  EXPECT_EQ(item[1].cast<int64_t>(), 2);
  EXPECT_EQ(array(global("ferry.DictPop")(d, "zz")).size(), 0u);
  EXPECT_EQ(array(global("ferry.DictPop")(d, "a"))[0].cast<int64_t>(), 1);
  EXPECT_EQ(array(global("ferry.DictPopItem")(d)).size(), 0u);
  EXPECT_EQ(global("ferry.DictSetDefault")(d, "k", 4).cast<int64_t>(), 4);
  EXPECT_EQ(global("ferry.DictSetDefault")(d, "k", 5).cast<int64_t>(), 4);
  global("ferry.DictUpdate")(d, "k", 6, "j", 7);
  EXPECT_EQ(d.at("k").cast<int64_t>(), 6);
  EXPECT_EQ(d.size(), 2u);
  ExpectError([&] { global("ferry.DictUpdate")(d, "k"); }, "TypeError", {"pairs"});
  ExpectError([&] { global("ferry.ListPop")(d, 0); }, "TypeError", {"expected ferry.List"});
}

TEST(ListDict, StructuralEqualityHashingAndJSON) {
  List<Any> a = {Any(1), Any(Dict<String, Any>{{"k", Any("v")}})};
  List<Any> b = {Any(1), Any(Dict<String, Any>{{"k", Any("v")}})};
  EXPECT_TRUE(StructuralEqual()(a, b));
  EXPECT_EQ(StructuralHash()(a), StructuralHash()(b));
  b.push_back(2);
  EXPECT_FALSE(StructuralEqual()(a, b));
  // A Dict's entry order does not matter, as for Map.
  Dict<String, int64_t> d1 = {{"x", 1}, {"y", 2}};
  Dict<String, int64_t> d2 = {{"y", 2}, {"x", 1}};
  EXPECT_TRUE(StructuralEqual()(d1, d2));
  EXPECT_EQ(StructuralHash()(d1), StructuralHash()(d2));
  // A List and an Array with the same elements are different types.
  EXPECT_FALSE(StructuralEqual()(List<int64_t>{1}, Array<int64_t>{1}));
  // JSON keeps sharing: one dict in two places comes back as one dict.
  Dict<String, int64_t> shared = {{"n", 1}};
  List<Any> outer = {Any(shared), Any(shared)};
  auto loaded = LoadJSON(SaveJSON(outer)).cast<List<Any>>();
  using StrIntDict = Dict<String, int64_t>;
  auto first = loaded[0].cast<StrIntDict>();
  first.Set("m", 2);
  EXPECT_EQ(loaded[1].cast<StrIntDict>().size(), 2u);
  EXPECT_TRUE(StructuralEqual()(LoadJSON(SaveJSON(d1)), d1));
}

/// An empty Array of its own (Array() is the one empty array every default Array shares).
Array<Any> OwnEmptyArray() {
  Array<Any> a = {Any(1)};
  a.pop_back();  // uniquely held: emptied in place
  return a;
}

TEST(ListDict, DistinctEmptyContainersLoadAsDistinctObjects) {
  // The loader made every empty Array (Map) node the one shared empty array (map), so two
  // containers that were distinct came back as one shared object, and the round trip was not
  // structurally equal to what was saved (equality maps each shared object to one object).
  Map<Any, Any> m1 = {{Any(1), Any(2)}}, m2 = {{Any(1), Any(2)}};
  m1.erase(1);
  m2.erase(1);
  List<Any> l1, l2;  // lists whose storage is an empty array of their own
  l1.push_back(1);
  l1.pop_back();
  l2.push_back(1);
  l2.pop_back();
  Dict<Any, Any> d1, d2;
  d1.Set(1, 2);
  d1.erase(1);
  d2.Set(1, 2);
  d2.erase(1);
  const Array<Any> distinct = {Any(OwnEmptyArray()),
                               Any(OwnEmptyArray()),
                               Any(m1),
                               Any(m2),
                               Any(l1),
                               Any(l2),
                               Any(d1),
                               Any(d2)};
  const Array<Any> loaded = LoadJSON(SaveJSON(distinct)).cast<Array<Any>>();
  EXPECT_TRUE(StructuralEqual()(distinct, loaded));
  for (int64_t k = 0; k < 8; k += 2) {
    EXPECT_FALSE(loaded[k].cast<ObjectRef>().same_as(loaded[k + 1].cast<ObjectRef>())) << k;
  }
  EXPECT_FALSE(
      loaded[4].cast<List<Any>>().ToArray().same_as(loaded[5].cast<List<Any>>().ToArray()));
  using AnyDict = Dict<Any, Any>;
  loaded[4].cast<List<Any>>().push_back(7);
  loaded[6].cast<AnyDict>().Set(7, 7);
  EXPECT_EQ(loaded[5].cast<List<Any>>().size(), 0u);
  EXPECT_EQ(loaded[7].cast<AnyDict>().size(), 0u);
  // Sharing that was in the graph is kept, empty or not.
  const Array<Any> empty = OwnEmptyArray();
  const List<Any> list;
  const Array<Any> shared = {Any(empty), Any(empty),        Any(list),
                             Any(list),  Any(Array<Any>()), Any(Array<Any>())};
  const Array<Any> back = LoadJSON(SaveJSON(shared)).cast<Array<Any>>();
  EXPECT_TRUE(StructuralEqual()(shared, back));
  for (int64_t k = 0; k < 6; k += 2) {
    EXPECT_TRUE(back[k].cast<ObjectRef>().same_as(back[k + 1].cast<ObjectRef>())) << k;
  }
}

TEST(ListDict, AListThatHoldsItselfIsAValueErrorForJSONAndNeverAHang) {
  List<Any> self;
  self.push_back(self);
  ExpectError([&] { SaveJSON(self); }, "ValueError", {"cycle"});
  Dict<String, Any> d;
  List<Any> holder = {Any(d)};
  d.Set("back", holder);
  ExpectError([&] { SaveJSON(d); }, "ValueError", {"cycle"});
  // Structural hashing and equality end (a cycle is hashed by its type; equality maps it).
  (void)StructuralHash()(self);
  EXPECT_TRUE(StructuralEqual()(self, self));
  EXPECT_NE(Repr(self).find("#1"), std::string::npos);  // repr labels the cycle
  self.clear();  // break the cycle so the list is freed (reference counting keeps cycles)
  d.clear();
}

}  // namespace
