// Tests of ferry/reflection/enum.h: enum fields reflected by name, JSON writes names and rejects
// unknown ones, conversion from name or value, structural equality and hashing by value.
#include <gtest/gtest.h>

#include <string>

#include "test_ir.h"

namespace {

using namespace test_ir;

enum class OpKind : int32_t { kAdd = 0, kMul = 1, kSub = 5 };
FERRY_REGISTER_ENUM(OpKind, "test.OpKind",
                    {{OpKind::kAdd, "Add"}, {OpKind::kMul, "Mul"}, {OpKind::kSub, "Sub"}});

class BinOpNode : public Object {
 public:
  OpKind op = OpKind::kAdd;
  Expr a;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("op", &op);
    v->Visit("a", &a);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "test.BinOp";
  FERRY_DECLARE_FINAL_OBJECT_INFO(BinOpNode, Object);
};
FERRY_REGISTER_NODE_TYPE(BinOpNode);

/// The same with hand-written reducers: `equal(op, ...)` sees the integer value.
class ReducedOpNode : public Object {
 public:
  OpKind op = OpKind::kAdd;
  void VisitAttrs(AttrVisitor* v) { v->Visit("op", &op); }
  bool SEqualReduce(const ReducedOpNode* other, SEqualReducer equal) const {
    return equal(op, other->op);
  }
  void SHashReduce(SHashReducer hash) const { hash(op); }
  static constexpr const char* _type_key = "test.ReducedOp";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ReducedOpNode, Object);
};
FERRY_REGISTER_NODE_TYPE(ReducedOpNode);

ObjectRef MakeBinOp(OpKind op) {
  auto n = make_object<BinOpNode>();
  n->op = op;
  n->a = IntImm(1);
  return ObjectRef(n);
}

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + std::string(e.message());
  }
  return "no error";
}

TEST(Enum, FieldsReadAsNamesAndWriteFromNameOrValue) {
  ObjectRef node = MakeBinOp(OpKind::kMul);
  EXPECT_EQ(GetAttr(node, "op").cast<String>(), "Mul");
  EXPECT_EQ(Any(OpKind::kSub).cast<String>(), "Sub");
  EXPECT_EQ(Any(String("Sub")).cast<OpKind>(), OpKind::kSub);
  EXPECT_EQ(Any(5).cast<OpKind>(), OpKind::kSub);
  ObjectRef made = MakeNode("test.BinOp", {{"op", String("Sub")}, {"a", IntImm(2)}});
  EXPECT_EQ(made.as<BinOpNode>()->op, OpKind::kSub);
  made = MakeNode("test.BinOp", {{"op", 1}, {"a", IntImm(2)}});
  EXPECT_EQ(made.as<BinOpNode>()->op, OpKind::kMul);
  auto fields = Function::GetGlobalRequired("ferry.NodeFields")(String("test.BinOp"));
  EXPECT_EQ(fields.cast<Array<String>>()[1], "Enum[test.OpKind]");
}

TEST(Enum, UnknownNamesAndValuesAreValueErrors) {
  std::string error = ErrorOf([] { Any(String("Div")).cast<OpKind>(); });
  EXPECT_EQ(error, "ValueError: \"Div\" is not a member of test.OpKind (members: Add, Mul, Sub)");
  error = ErrorOf([] { Any(3).cast<OpKind>(); });
  EXPECT_NE(error.find("ValueError: 3 is not a member of test.OpKind"), std::string::npos) << error;
  error = ErrorOf([] { MakeNode("test.BinOp", {{"op", String("Div")}, {"a", IntImm(2)}}); });
  EXPECT_NE(error.find("ValueError"), std::string::npos) << error;
  EXPECT_NE(error.find("field 'op'"), std::string::npos) << error;
  error = ErrorOf([] { Any(2.5).cast<OpKind>(); });
  EXPECT_NE(error.find("TypeError"), std::string::npos) << error;
}

TEST(Enum, JSONWritesTheNameAndRejectsUnknownNames) {
  ObjectRef node = MakeBinOp(OpKind::kSub);
  std::string text = SaveJSON(node);
  EXPECT_NE(text.find("\"op\": \"Sub\""), std::string::npos) << text;
  ObjectRef back = LoadJSON(text).cast<ObjectRef>();
  EXPECT_EQ(back.as<BinOpNode>()->op, OpKind::kSub);
  std::string bad = text;
  bad.replace(bad.find("\"Sub\""), 5, "\"Div\"");
  std::string error = ErrorOf([&] { LoadJSON(bad); });
  EXPECT_NE(error.find("ValueError"), std::string::npos) << error;
  EXPECT_NE(error.find("\"Div\" is not a member of test.OpKind"), std::string::npos) << error;
}

TEST(Enum, StructuralEqualityAndHashByValue) {
  EXPECT_TRUE(StructuralEqual()(MakeBinOp(OpKind::kMul), MakeBinOp(OpKind::kMul)));
  EXPECT_FALSE(StructuralEqual()(MakeBinOp(OpKind::kMul), MakeBinOp(OpKind::kAdd)));
  EXPECT_EQ(StructuralHash()(MakeBinOp(OpKind::kMul)), StructuralHash()(MakeBinOp(OpKind::kMul)));
  EXPECT_NE(StructuralHash()(MakeBinOp(OpKind::kMul)), StructuralHash()(MakeBinOp(OpKind::kAdd)));
  EXPECT_EQ(StructuralMismatch(MakeBinOp(OpKind::kMul), MakeBinOp(OpKind::kAdd)).value_or(""),
            "root.op");
  auto reduced = [](OpKind op) {
    auto n = make_object<ReducedOpNode>();
    n->op = op;
    return ObjectRef(n);
  };
  EXPECT_TRUE(StructuralEqual()(reduced(OpKind::kSub), reduced(OpKind::kSub)));
  EXPECT_FALSE(StructuralEqual()(reduced(OpKind::kSub), reduced(OpKind::kAdd)));
  EXPECT_EQ(StructuralHash()(reduced(OpKind::kSub)), StructuralHash()(reduced(OpKind::kSub)));
}

TEST(Enum, RegistryLookupsAndConflicts) {
  const EnumInfo* info = details::FindEnum("test.OpKind");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->members.size(), 3u);
  EXPECT_EQ(*info->NameOf(5), "Sub");
  // The same members again: fine; other members under the same key: a ValueError.
  details::RegisterEnum("", "test.OpKind", info->members);
  std::string error = ErrorOf([] { details::RegisterEnum("", "test.OpKind", {{0, "Add"}}); });
  EXPECT_NE(error.find("ValueError"), std::string::npos) << error;
  error = ErrorOf([] { details::RegisterEnum("", "test.Dup", {{0, "A"}, {0, "B"}}); });
  EXPECT_NE(error.find("repeat"), std::string::npos) << error;
  Any flat = Function::GetGlobalRequired("ferry.EnumGet")(String("test.OpKind"));
  EXPECT_EQ(flat.cast<Array<Any>>().size(), 6u);
  EXPECT_EQ(Function::GetGlobalRequired("ferry.EnumGet")(String("test.Nope")).type_index(),
            kFerryNone);
}

}  // namespace
