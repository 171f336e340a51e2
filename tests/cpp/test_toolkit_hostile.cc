// The compiler writer's toolkit (issue 35) used the way a careless or hostile user would: odd
// enum registrations and values, tuples with null or wrong items, visit/transform callbacks
// that throw anything, return odd things or change the graph, walks from several threads, and
// structural_mismatch over cycles and huge arrays. Each test pins what holds.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_ir.h"

namespace {

using namespace test_ir;

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + std::string(e.message());
  }
  return "no error";
}

enum class Wide : uint64_t { kSmall = 1, kTop = std::numeric_limits<uint64_t>::max() };
FERRY_REGISTER_ENUM(Wide, "hostile.Wide", {{Wide::kSmall, "Small"}, {Wide::kTop, "Top"}});

enum class Signed : int64_t {
  kMin = std::numeric_limits<int64_t>::min(),
  kZero = 0,
  kMax = std::numeric_limits<int64_t>::max()
};
FERRY_REGISTER_ENUM(Signed, "hostile.Signed",
                    {{Signed::kMin, "Min"}, {Signed::kZero, "Zero"}, {Signed::kMax, "Max"}});

class EnumHolderNode : public Object {
 public:
  Signed s = Signed::kZero;
  Wide w = Wide::kSmall;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("s", &s);
    v->Visit("w", &w);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "hostile.EnumHolder";
  FERRY_DECLARE_FINAL_OBJECT_INFO(EnumHolderNode, Object);
};
FERRY_REGISTER_NODE_TYPE(EnumHolderNode);

TEST(ToolkitHostile, EnumExtremeValuesRoundTrip) {
  EXPECT_EQ(Any(Signed::kMin).cast<String>(), "Min");
  EXPECT_EQ(Any(Signed::kMax).cast<String>(), "Max");
  EXPECT_EQ(Any(String("Min")).cast<Signed>(), Signed::kMin);
  EXPECT_EQ(Any(std::numeric_limits<int64_t>::min()).cast<Signed>(), Signed::kMin);
  // An unsigned enum past INT64_MAX is stored as its two's-complement int64 and comes back.
  EXPECT_EQ(Any(Wide::kTop).cast<String>(), "Top");
  EXPECT_EQ(Any(String("Top")).cast<Wide>(), Wide::kTop);
  EXPECT_EQ(Any(int64_t{-1}).cast<Wide>(), Wide::kTop);
  ObjectPtr<EnumHolderNode> n = make_object<EnumHolderNode>();
  n->s = Signed::kMin;
  n->w = Wide::kTop;
  ObjectRef ref(n);
  std::string text = SaveJSON(ref);
  EXPECT_NE(text.find("\"Min\""), std::string::npos);
  EXPECT_NE(text.find("\"Top\""), std::string::npos);
  ObjectRef back = LoadJSON(text).cast<ObjectRef>();
  EXPECT_EQ(back.as<EnumHolderNode>()->s, Signed::kMin);
  EXPECT_EQ(back.as<EnumHolderNode>()->w, Wide::kTop);
  EXPECT_TRUE(StructuralEqual()(ref, back));
}

TEST(ToolkitHostile, EnumFieldHoldingANonMemberIsWalkedAndAnErrorWhereItIsNamed) {
  ObjectPtr<EnumHolderNode> n = make_object<EnumHolderNode>();
  n->s = static_cast<Signed>(42);  // not a member: C++ lets anyone write it
  ObjectRef ref(n);
  // Visit and transform never read an enum field (it holds no object): no error, no name made.
  int64_t seen = 0;
  StructuralVisit(ref, [&](const ObjectRef&) { ++seen; });
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(StructuralTransform(ref, [](const ObjectRef&) { return ObjectRef(); }).same_as(ref));
  Array<ObjectRef> holders{ref, IntImm(1)};
  Array<ObjectRef> out = StructuralTransform(holders, [](const ObjectRef& node) -> ObjectRef {
    if (node.as<IntImmNode>()) return IntImm(2);
    return ObjectRef();
  });
  EXPECT_TRUE(out[0].same_as(ref));
  // What has to name the member says which value is none: JSON, GetAttr, the structural walks
  // of a node compared by its fields.
  const std::string not_member = "42 is not a member of hostile.Signed";
  EXPECT_NE(ErrorOf([&] { SaveJSON(ref); }).find(not_member), std::string::npos);
  EXPECT_NE(ErrorOf([&] { GetAttr(ref, "s"); }).find(not_member), std::string::npos);
  EXPECT_NE(ErrorOf([&] { StructuralHash()(ref); }).find(not_member), std::string::npos);
  EXPECT_NE(ErrorOf([&] { StructuralEqual()(ref, ref); }).find(not_member), std::string::npos);
}

TEST(ToolkitHostile, EnumRegistrationConflictsAreValueErrors) {
  using details::RegisterEnum;
  EXPECT_NE(ErrorOf([] {
              RegisterEnum("", "hostile.Dup", {{1, "A"}, {1, "B"}});
            }).find("repeat a name or a value"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              RegisterEnum("", "hostile.Dup", {{1, "A"}, {2, "A"}});
            }).find("repeat a name or a value"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              RegisterEnum("", "hostile.Signed", {{0, "Zero"}});
            }).find("registered already with other members"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              RegisterEnum("", "hostile.NoName", {{0, ""}});
            }).find("has no name"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              RegisterEnum("", "", {{0, "A"}});
            }).find("key is empty"),
            std::string::npos);
}

TEST(ToolkitHostile, OneCppEnumTypeUnderTwoKeysIsAValueError) {
  // Before: the second key silently took the type over, while conversions kept using the
  // registration cached from the first (EnumInfoOf): two member lists for one type.
  std::string err = ErrorOf([] {
    details::RegisterEnumType<Wide>("hostile.Wide2", {{Wide::kSmall, "Small"}});
  });
  EXPECT_NE(err.find("ValueError"), std::string::npos) << err;
  EXPECT_NE(err.find("hostile.Wide"), std::string::npos) << err;
  EXPECT_EQ(details::FindEnum("hostile.Wide2"), nullptr);
  EXPECT_EQ(TypeTraits<Wide>::TypeStr(), "Enum[hostile.Wide]");
  // The same registration again (a library loaded twice) is fine.
  EXPECT_NO_THROW(details::RegisterEnumType<Wide>("hostile.Wide",
                                                  {{Wide::kSmall, "Small"}, {Wide::kTop, "Top"}}));
}

TEST(ToolkitHostile, TupleOfDefaultConstructedObjectsHoldsNullItems) {
  Tuple<Expr, int64_t> t;
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.get<1>(), 0);
  std::string err = ErrorOf([&] { (void)t.get<0>(); });
  EXPECT_TRUE(err == "no error" || err.find("TypeError") == 0) << err;
}

TEST(ToolkitHostile, TupleFromWrongArraysIsATypeError) {
  Array<Any> two{int64_t{1}, String("a")};
  EXPECT_NE(ErrorOf([&] { Any(two).cast<Tuple<int64_t>>(); }).find("expected 1 items but got 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Any(two).cast<Tuple<int64_t, int64_t>>(); }).find("item 1"),
            std::string::npos);
  List<Any> list{int64_t{1}, String("a")};
  EXPECT_NE(ErrorOf([&] { Any(list).cast<Tuple<int64_t, String>>(); }).find("TypeError"),
            std::string::npos);
  Tuple<int64_t, String> ok = Any(two).cast<Tuple<int64_t, String>>();
  // The tuple shares the array; writing through the array copies, the tuple stays the same.
  two.Set(1, int64_t{5});
  EXPECT_EQ(ok.get<1>(), "a");
  Tuple<Tuple<int64_t>, Optional<Expr>> nested{Tuple<int64_t>(int64_t{7}), std::nullopt};
  EXPECT_EQ(nested.get<0>().get<0>(), 7);
  EXPECT_FALSE(nested.get<1>().has_value());
}

TEST(ToolkitHostile, FnThrowingAnythingPropagatesAndLeaksNothing) {
  Expr root = Add(Add(IntImm(1), IntImm(2)), IntImm(3));
  Expr kept = root;
  int64_t before = kept.use_count();
  EXPECT_THROW(StructuralVisit(root, [](const ObjectRef&) { throw 42; }), int);
  EXPECT_THROW(StructuralTransform(root,
                                   [](const ObjectRef& n) -> ObjectRef {
                                     if (n.as<AddNode>()) throw std::runtime_error("rt");
                                     return IntImm(9);
                                   }),
               std::exception);
  EXPECT_EQ(kept.use_count(), before);
}

/// A node that counts the live instances of its type.
class CountedNode : public Object {
 public:
  static inline int64_t live = 0;
  ObjectRef kid;
  CountedNode() { ++live; }
  CountedNode(const CountedNode& other) : Object(), kid(other.kid) { ++live; }
  ~CountedNode() { --live; }
  void VisitAttrs(AttrVisitor* v) { v->Visit("kid", &kid); }
  static constexpr const char* _type_key = "hostile.Counted";
  FERRY_DECLARE_FINAL_OBJECT_INFO(CountedNode, Object);
};
FERRY_REGISTER_NODE_TYPE(CountedNode);

ObjectRef Counted(ObjectRef kid = ObjectRef()) {
  ObjectPtr<CountedNode> node = make_object<CountedNode>();
  node->kid = std::move(kid);
  return ObjectRef(std::move(node));
}

TEST(ToolkitHostile, AFailedTransformFreesTheReplacementsItMade) {
  {
    // A chain 2000 deep in an Array, shared twice: fn replaces every node, then throws at the
    // root, after a whole copied spine was built.
    ObjectRef chain;
    for (int i = 0; i < 2000; ++i) chain = Counted(chain);
    Array<ObjectRef> root{chain, chain, List<ObjectRef>{chain}};
    const int64_t before = CountedNode::live;
    for (int round = 0; round < 3; ++round) {
      std::string err = ErrorOf([&] {
        StructuralTransform(root, [&](const ObjectRef& node) -> ObjectRef {
          const auto* array = node.as<ArrayObj>();
          if (array != nullptr && array->size() == 3) FERRY_THROW(ValueError) << "at the root";
          if (node.as<CountedNode>()) return Counted(node.as<CountedNode>()->kid);
          return ObjectRef();
        });
      });
      EXPECT_NE(err.find("at the root"), std::string::npos) << err;
      EXPECT_EQ(CountedNode::live, before);
    }
    EXPECT_THROW(StructuralVisit(root, [](const ObjectRef&) { throw 7; }), int);
    EXPECT_EQ(CountedNode::live, before);
  }
  EXPECT_EQ(CountedNode::live, 0);
}

TEST(ToolkitHostile, NestedTransformsInsideFn) {
  Expr root = Add(IntImm(1), IntImm(2));
  int depth = 0;
  std::function<ObjectRef(const ObjectRef&)> fn = [&](const ObjectRef&) -> ObjectRef {
    if (++depth > 200) return ObjectRef();
    return StructuralTransform(AnyView(root), fn).cast<ObjectRef>();
  };
  Any out = StructuralTransform(AnyView(root), fn);
  EXPECT_GT(depth, 200);
  EXPECT_TRUE(out.cast<ObjectRef>().defined());
}

TEST(ToolkitHostile, ReplacingAChildByItsAncestorMakesNoCycle) {
  Expr root = Add(IntImm(1), IntImm(2));
  Expr out = StructuralTransform(root, [&](const ObjectRef& n) -> ObjectRef {
    if (n.as<IntImmNode>()) return root;
    return ObjectRef();
  });
  EXPECT_TRUE(out.as<AddNode>()->a.same_as(root));
  EXPECT_TRUE(out.as<AddNode>()->b.same_as(root));
  EXPECT_FALSE(StructuralMismatch(out, out).has_value());
}

TEST(ToolkitHostile, FnAppendingToAListItWalksIsSafe) {
  List<Any> list{IntImm(1), IntImm(2)};
  int64_t calls = 0;
  StructuralVisit(list, [&](const ObjectRef& n) {
    ++calls;
    if (n.as<IntImmNode>() && list.size() < 1000) list.push_back(IntImm(3));
  });
  EXPECT_EQ(list.size(), 1000);
  List<Any> outer{list};
  std::string err = ErrorOf([&] {
    StructuralTransform(outer, [&](const ObjectRef& n) -> ObjectRef {
      if (n.as<IntImmNode>()) {
        list.clear();
        return IntImm(0);
      }
      return ObjectRef();
    });
  });
  EXPECT_NE(err.find("children changed during the walk"), std::string::npos) << err;
}

TEST(ToolkitHostile, ThreadsWalkingOneSharedGraph) {
  Expr shared = Add(IntImm(1), IntImm(2));
  Expr chain = IntImm(0);
  for (int i = 0; i < 5000; ++i) chain = Add(chain, shared);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 10; ++round) {
        int64_t seen = 0;
        StructuralVisit(chain, [&](const ObjectRef&) { ++seen; });
        if (seen != 5000 + 1 + 3) ++bad;
        Expr out = StructuralTransform(chain, [](const ObjectRef& n) -> ObjectRef {
          const auto* imm = n.as<IntImmNode>();
          if (imm != nullptr && imm->value == 0) return IntImm(100);
          return ObjectRef();
        });
        if (out.same_as(chain)) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(ToolkitHostile, BytesCompareAndHashByContent) {
  // Before: bytes compared by identity, so two equal byte strings (or a node with a bytes field
  // and its JSON round trip) were structurally unequal, with a mismatch at the bytes.
  Array<Any> a{Bytes("xx"), String("s")};
  Array<Any> b{Bytes("xx"), String("s")};
  EXPECT_TRUE(StructuralEqual()(a, b));
  EXPECT_EQ(StructuralHash()(a), StructuralHash()(b));
  EXPECT_FALSE(StructuralMismatch(a, b).has_value());
  Array<Any> c{Bytes("xy"), String("s")};
  EXPECT_FALSE(StructuralEqual()(a, c));
  EXPECT_NE(StructuralHash()(a), StructuralHash()(c));
  EXPECT_EQ(StructuralMismatch(a, c).value_or("none"), "root[0]");
  EXPECT_EQ(StructuralMismatch(a, Array<Any>{Bytes("x"), String("s")}).value_or("none"), "root[0]");
  // Bytes are values: one object twice against two equal ones is equal (as for strings).
  Bytes once("zz");
  EXPECT_TRUE(StructuralEqual()(Array<Any>{once, once}, Array<Any>{Bytes("zz"), Bytes("zz")}));
  EXPECT_EQ(StructuralHash()(Array<Any>{once, once}),
            StructuralHash()(Array<Any>{Bytes("zz"), Bytes("zz")}));
  // Bytes against a string of the same text are different kinds of value.
  EXPECT_FALSE(StructuralEqual()(Array<Any>{Bytes("xx")}, Array<Any>{String("xx")}));
  Any back = LoadJSON(SaveJSON(a));
  EXPECT_TRUE(StructuralEqual()(a, back));
}

TEST(ToolkitHostile, MismatchOverCyclesHugeArraysAndMapOrder) {
  List<Any> a{int64_t{1}};
  a.push_back(a);
  List<Any> b{int64_t{1}};
  b.push_back(b);
  EXPECT_FALSE(StructuralMismatch(a, b).has_value());
  List<Any> c{int64_t{2}};
  c.push_back(c);
  EXPECT_EQ(StructuralMismatch(a, c).value_or("none"), "root[0]");
  a.clear();
  b.clear();
  c.clear();
  std::vector<int64_t> big(3'000'000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int64_t>(i);
  Array<int64_t> x(big.begin(), big.end());
  big.back() = -1;
  Array<int64_t> y(big.begin(), big.end());
  EXPECT_EQ(StructuralMismatch(x, y).value_or("none"), "root[2999999]");
  Map<String, int64_t> m1{{"a", 1}, {"b", 2}};
  Map<String, int64_t> m2{{"b", 2}, {"a", 1}};
  EXPECT_FALSE(StructuralMismatch(m1, m2).has_value());
  Map<String, int64_t> m3{{"b", 3}, {"a", 1}};
  EXPECT_EQ(StructuralMismatch(m1, m3).value_or("none"), "root[\"b\"]");
  EXPECT_EQ(StructuralMismatch(IntImm(1), Var("x")).value_or("none"), "root");
}

}  // namespace
