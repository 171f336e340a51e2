// Tests of ferry/container/tuple.h: typed access, conversion checks naming the item, structural
// equality and hashing, JSON, reflection of Tuple fields, and StructuralTransform through them.
#include <gtest/gtest.h>

#include <string>

#include "test_ir.h"

namespace {

using namespace test_ir;

/// A node with a Tuple field.
class PairHolderNode : public Object {
 public:
  Tuple<int64_t, Expr> pair{0, Expr(IntImm(0))};
  void VisitAttrs(AttrVisitor* v) { v->Visit("pair", &pair); }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "test.PairHolder";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PairHolderNode, Object);
};
FERRY_REGISTER_NODE_TYPE(PairHolderNode);

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + std::string(e.message());
  }
  return "no error";
}

TEST(Tuple, TypedAccessAndStructuredBindings) {
  Tuple<int64_t, String, double> t(1, "one", 2.5);
  EXPECT_EQ(t.get<0>(), 1);
  EXPECT_EQ(t.get<1>(), "one");
  EXPECT_EQ(t.get<2>(), 2.5);
  static_assert(Tuple<int64_t, String>::size() == 2);
  auto [n, s, d] = t;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(s, "one");
  EXPECT_EQ(d, 2.5);
  EXPECT_EQ(get<1>(t), "one");
  EXPECT_EQ(t.ToArray().size(), 3u);
  Tuple<int64_t, String> def;
  EXPECT_EQ(def.get<0>(), 0);
  EXPECT_EQ(def.get<1>(), "");
  Tuple<> empty;
  EXPECT_EQ(empty.ToArray().size(), 0u);
}

TEST(Tuple, ConversionChecksLengthAndItems) {
  Any ok = Array<Any>{1, String("a")};
  auto from_array = ok.cast<Tuple<int64_t, String>>();
  EXPECT_EQ(from_array.get<1>(), "a");
  EXPECT_EQ((TypeTraitsOf<Tuple<int64_t, String>>::TypeStr()), "Tuple[int, ferry.String]");
  Any bad_item = Array<Any>{1, 2};
  std::string error = ErrorOf([&] { bad_item.cast<Tuple<int64_t, String>>(); });
  EXPECT_NE(error.find("TypeError"), std::string::npos) << error;
  EXPECT_NE(error.find("Tuple[int, ferry.String]"), std::string::npos) << error;
  EXPECT_NE(error.find("item 1: expected ferry.String but got int"), std::string::npos) << error;
  Any short_one = Array<Any>{1};
  error = ErrorOf([&] { short_one.cast<Tuple<int64_t, String>>(); });
  EXPECT_NE(error.find("expected 2 items but got 1"), std::string::npos) << error;
  EXPECT_FALSE(Any(3).as<Tuple<int64_t>>().has_value());
}

TEST(Tuple, StructuralEqualityHashAndJSON) {
  Tuple<int64_t, Expr> a(1, Expr(IntImm(2)));
  Tuple<int64_t, Expr> b(1, Expr(IntImm(2)));
  Tuple<int64_t, Expr> c(1, Expr(IntImm(3)));
  EXPECT_TRUE(StructuralEqual()(a, b));
  EXPECT_EQ(StructuralHash()(a), StructuralHash()(b));
  EXPECT_FALSE(StructuralEqual()(a, c));
  EXPECT_EQ(StructuralMismatch(a, c).value_or(""), "root[1].value");
  auto back = LoadJSON(SaveJSON(a)).cast<Tuple<int64_t, Expr>>();
  EXPECT_TRUE(StructuralEqual()(a, back));
  EXPECT_EQ(back.get<1>().as<IntImmNode>()->value, 2);
}

TEST(Tuple, ReflectedFieldsCheckTheirItems) {
  ObjectRef node = MakeNode("test.PairHolder", {{"pair", Array<Any>{5, IntImm(6)}}});
  EXPECT_EQ(node.as<PairHolderNode>()->pair.get<0>(), 5);
  std::string error = ErrorOf([&] {
    MakeNode("test.PairHolder", {{"pair", Array<Any>{5, String("x")}}});
  });
  EXPECT_NE(error.find("field 'pair'"), std::string::npos) << error;
  EXPECT_NE(error.find("item 1"), std::string::npos) << error;
  auto back = LoadJSON(SaveJSON(node));
  EXPECT_TRUE(StructuralEqual()(node, back));
  // A transform rebuilds the tuple like an array, and checks the field's item types.
  ObjectRef out = StructuralTransform(node, [](const ObjectRef& n) -> ObjectRef {
    const auto* imm = n.as<IntImmNode>();
    if (imm != nullptr && imm->value == 6) return IntImm(60);
    return ObjectRef();
  });
  EXPECT_EQ(out.as<PairHolderNode>()->pair.get<1>().as<IntImmNode>()->value, 60);
  error = ErrorOf([&] {
    StructuralTransform(node, [](const ObjectRef& n) -> ObjectRef {
      if (n.as<IntImmNode>() != nullptr) return Array<Any>();
      return ObjectRef();
    });
  });
  EXPECT_NE(error.find("field 'pair' of 'test.PairHolder'"), std::string::npos) << error;
}

}  // namespace
