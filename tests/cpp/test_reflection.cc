// Tests of ferry/reflection/reflection.h: field tables, GetAttr, MakeNode, Repr, and the
// globals and C function other languages use.
#include <gtest/gtest.h>

#include <string>

#include "test_ir.h"
#include "test_util.h"

namespace {

using namespace test_ir;
using ferry_test::ExpectError;

// A node whose `scale` and `label` have defaults recorded by its registration (as tschema's
// generated source records a schema's defaults); `value` has none.
class DefaultedNode : public Object {
 public:
  int64_t value = 0;
  double scale = 2.5;
  String label = "unit";
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("value", &value);
    v->Visit("scale", &scale);
    v->Visit("label", &label);
  }
  static constexpr const char* _type_key = "test.Defaulted";
  FERRY_DECLARE_BASE_OBJECT_INFO(DefaultedNode, Object);
};
FERRY_REGISTER_NODE_TYPE(DefaultedNode);
FERRY_REGISTER_FIELD_DEFAULT(DefaultedNode, "scale");
FERRY_REGISTER_FIELD_DEFAULT(DefaultedNode, "label");

TEST(Reflection, MakeNodeKeepsRecordedDefaultsOfCppNodes) {
  ObjectRef node = MakeNode("test.Defaulted", {{"value", Any(3)}});
  const auto* n = static_cast<const DefaultedNode*>(node.get());
  EXPECT_EQ(n->value, 3);
  EXPECT_EQ(n->scale, 2.5);
  EXPECT_EQ(std::string(n->label), "unit");
  ObjectRef given = MakeNode("test.Defaulted", {{"value", Any(1)}, {"scale", Any(0.5)}});
  EXPECT_EQ(static_cast<const DefaultedNode*>(given.get())->scale, 0.5);
  // A field without a recorded default is still required, by name.
  ExpectError(
      [] {
        MakeNode("test.Defaulted", {{"scale", Any(1.0)}});
      },
      "ValueError", {"MakeNode(test.Defaulted): missing fields: value"});
  ExpectError([] { RegisterFieldDefault("test.Defaulted", "nope"); }, "ValueError",
              {"'test.Defaulted' has no field 'nope'"});
  ExpectError([] { RegisterFieldDefault("test.NoSuchType", "x"); }, "ValueError",
              {"no node type is registered as 'test.NoSuchType'"});
}

TEST(Reflection, TypesRegisteredAtRunTimeKeepTheirCppAncestorsRecordedDefaults) {
  FerryFieldSpec extra{"extra", "int", 0};
  int32_t index = -1;
  ASSERT_EQ(FerryTypeRegisterWithFields("test.DefaultedChild", DefaultedNode::RuntimeTypeIndex(), 0,
                                        0, &extra, 1, &index),
            0);
  ObjectRef node = MakeNode("test.DefaultedChild", {{"value", Any(5)}, {"extra", Any(6)}});
  EXPECT_EQ(GetAttr(node, "scale").cast<double>(), 2.5);
  EXPECT_EQ(GetAttr(node, "label").cast<String>(), "unit");
  EXPECT_EQ(GetAttr(node, "extra").cast<int64_t>(), 6);
  ExpectError(
      [] {
        MakeNode("test.DefaultedChild", {{"value", Any(5)}});
      },
      "ValueError", {"missing fields: extra"});
  ExpectError([] { RegisterFieldDefault("test.DefaultedChild", "extra"); }, "TypeError",
              {"'test.DefaultedChild' is not a C++ node"});
}

TEST(Reflection, RecordsFieldsOnceWithOffsets) {
  const NodeInfo* info = GetNodeInfo("test.Add");
  ASSERT_NE(info, nullptr);
  ASSERT_TRUE(info->fields_recorded);
  ASSERT_EQ(info->fields.size(), 2u);
  EXPECT_EQ(info->fields[0].name, "a");
  auto node = make_object<AddNode>();
  const char* base = reinterpret_cast<const char*>(node.get());
  EXPECT_EQ(info->fields[0].offset, static_cast<size_t>(reinterpret_cast<char*>(&node->a) - base));
  EXPECT_EQ(info->fields[1].offset, static_cast<size_t>(reinterpret_cast<char*>(&node->b) - base));
  EXPECT_EQ(info->fields[1].type->type_str(), "test.Expr");
  const NodeInfo* attrs = GetNodeInfo("test.Attrs");
  ASSERT_NE(attrs, nullptr);
  EXPECT_EQ(attrs->FindField("items")->type->type_str(), "Array[test.Expr]");
  EXPECT_EQ(attrs->FindField("table")->type->type_str(), "Map[ferry.String, test.Expr]");
  EXPECT_EQ(attrs->FindField("maybe")->type->type_str(), "Optional[test.Expr]");
  EXPECT_EQ(GetNodeInfo("test.Opaque"), nullptr);
}

TEST(Reflection, GetAttrReadsEveryKindOfField) {
  auto n = make_object<AttrsNode>();
  n->flag = true;
  n->small = -7;
  n->ratio = 0.5;
  n->text = "std string";
  n->name = "ferry";
  n->maybe = IntImm(3);
  n->count = 9;
  n->items = {IntImm(1), Var("x")};
  n->table = {{"k", IntImm(2)}};
  n->shape = {2, 3};
  n->anything = 1.5;
  ObjectRef obj(n);
  EXPECT_EQ(GetAttr(obj, "flag").cast<bool>(), true);
  EXPECT_EQ(GetAttr(obj, "small").cast<int64_t>(), -7);
  EXPECT_EQ(GetAttr(obj, "ratio").cast<double>(), 0.5);
  EXPECT_EQ(GetAttr(obj, "text").cast<std::string>(), "std string");
  EXPECT_EQ(GetAttr(obj, "name").cast<String>(), "ferry");
  EXPECT_EQ(GetAttr(obj, "dtype").cast<DataType>(), DataType("float32"));
  EXPECT_EQ(GetAttr(obj, "maybe").cast<IntImm>()->value, 3);
  EXPECT_EQ(GetAttr(obj, "count").cast<int64_t>(), 9);
  EXPECT_EQ(GetAttr(obj, "items").cast<Array<Expr>>().size(), 2u);
  using Table = Map<String, Expr>;
  EXPECT_EQ(GetAttr(obj, "table").cast<Table>().size(), 1u);
  EXPECT_EQ(GetAttr(obj, "shape").cast<Shape>().Product(), 6);
  EXPECT_EQ(GetAttr(obj, "anything").cast<double>(), 1.5);
  n->maybe = Optional<Expr>();
  EXPECT_TRUE(GetAttr(obj, "maybe").is_none());
  auto names = ListAttrNames(obj);
  EXPECT_EQ(names.size(), 12u);
  EXPECT_EQ(names[0], "flag");
  EXPECT_EQ(names[11], "anything");
}

TEST(Reflection, MissingFieldIsAttributeErrorNamingTypeAndField) {
  Add add(IntImm(1), IntImm(2));
  ExpectError([&] { GetAttr(add, "c"); }, "AttributeError", {"'test.Add'", "'c'"});
  ExpectError([&] { GetAttr(ObjectRef(make_object<OpaqueNode>()), "x"); }, "AttributeError",
              {"'test.Opaque'", "'x'"});
  ExpectError([&] { GetAttr(ObjectRef(), "x"); }, "AttributeError", {"None"});
}

TEST(Reflection, NodeWithoutDefaultConstructorIsReflectedFromItsFirstObject) {
  ObjectRef fixed(make_object<FixedNode>(42));
  EXPECT_EQ(GetAttr(fixed, "value").cast<int64_t>(), 42);
  EXPECT_EQ(ListAttrNames(fixed).size(), 1u);
  ExpectError(
      [] {
        MakeNode("test.Fixed", {{"value", Any(1)}});
      },
      "TypeError", {"test.Fixed has no default constructor"});
}

TEST(Reflection, MakeNodeBuildsFromNamedFields) {
  ObjectRef add = MakeNode("test.Add", {{"a", IntImm(1)}, {"b", Var("x")}});
  ASSERT_NE(add.as<AddNode>(), nullptr);
  EXPECT_EQ(Downcast<IntImm>(add.as<AddNode>()->a)->value, 1);
  // Values convert as Function arguments do: a list becomes Array<Expr>, an int an int32.
  ObjectRef attrs = MakeNode("test.Attrs", {{"flag", Any(true)},
                                            {"small", Any(5)},
                                            {"ratio", Any(2)},
                                            {"text", Any("t")},
                                            {"name", Any("n")},
                                            {"dtype", Any("int8")},
                                            {"maybe", Any(nullptr)},
                                            {"count", Any(nullptr)},
                                            {"items", Any(Array<Any>{Any(IntImm(4))})},
                                            {"table", Any(Map<Any, Any>{})},
                                            {"shape", Any(Array<Any>{Any(4), Any(5)})},
                                            {"anything", Any("whatever")}});
  const auto* n = attrs.as<AttrsNode>();
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->small, 5);
  EXPECT_EQ(n->ratio, 2.0);
  EXPECT_EQ(n->dtype, DataType("int8"));
  EXPECT_FALSE(n->count.has_value());
  EXPECT_EQ(n->items.size(), 1u);
  EXPECT_EQ(n->shape.Product(), 20);
}

TEST(Reflection, MakeNodeErrorsNameFieldsAndTypes) {
  ExpectError([] { MakeNode("test.Nope", {}); }, "ValueError", {"'test.Nope'"});
  ExpectError(
      [] {
        MakeNode("test.Add", {{"a", IntImm(1)}, {"c", IntImm(2)}});
      },
      "ValueError", {"MakeNode(test.Add)", "missing fields: b", "unknown fields: c"});
  ExpectError(
      [] {
        MakeNode("test.Add", {{"a", IntImm(1)}, {"b", Any(3)}});
      },
      "TypeError", {"MakeNode(test.Add): field 'b': expected test.Expr but got int"});
  ExpectError(
      [] {
        MakeNode("test.Func",
                 {{"params", Any(Array<Any>{Any(Var("x")), Any(IntImm(1))})}, {"body", Var("x")}});
      },
      "TypeError",
      {"field 'params': expected Array[test.Var] but got ferry.Array",
       "element 1: expected test.Var but got test.IntImm"});
  ExpectError(
      [] {
        MakeNode("test.IntImm", {{"value", Any(1)}, {"dtype", Any("nonsense")}});
      },
      "TypeError", {"field 'dtype': expected DataType but got ferry.String"});
}

TEST(Reflection, ReprIsReadableAndMarksSharing) {
  Var x("x");
  EXPECT_EQ(Repr(Add(x, IntImm(3))),
            "test.Add(a=test.Var(name=\"x\"), b=test.IntImm(value=3, dtype=int64))");
  Expr shared = Add(x, x);
  EXPECT_EQ(Repr(Add(shared, shared)),
            "test.Add(a=#1=test.Add(a=#2=test.Var(name=\"x\"), b=#2), b=#1)");
  EXPECT_EQ(Repr(Array<Any>{Any(1), Any("s"), Any(Shape({2, 3}))}), "[1, \"s\", Shape(2, 3)]");
  EXPECT_EQ(Repr(Map<String, int64_t>{{"a", 1}}), "{\"a\": 1}");
}

TEST(Reflection, ReprEndsCyclesAndCutsDepth) {
  // Objects are immutable by convention only: a mutable Any field can close a cycle.
  auto n = make_object<AttrsNode>();
  ObjectRef self(n);
  n->anything = self;
  std::string text = Repr(self);
  EXPECT_EQ(text.rfind("#1=test.Attrs(", 0), 0u) << text;
  EXPECT_NE(text.find("anything=#1)"), std::string::npos) << text;
  n->anything = Any();  // break the cycle so the node is freed

  Expr deep = IntImm(0);
  for (int i = 0; i < 100000; ++i) deep = Add(deep, IntImm(i));
  text = Repr(deep);
  EXPECT_NE(text.find("..."), std::string::npos);
  EXPECT_LT(text.size(), 100000u);
}

TEST(Reflection, GlobalsAndCApi) {
  Function make = Function::GetGlobalRequired("ferry.MakeNode");
  Any add = make("test.Add", "a", IntImm(1), "b", IntImm(2));
  Function get_attr = Function::GetGlobalRequired("ferry.NodeGetAttr");
  EXPECT_EQ(get_attr(get_attr(add, "b"), "value").cast<int64_t>(), 2);
  auto names = Function::GetGlobalRequired("ferry.NodeListAttrNames")(add).cast<Array<String>>();
  EXPECT_EQ(names.size(), 2u);
  auto fields =
      Function::GetGlobalRequired("ferry.NodeFields")("test.IntImm").cast<Array<String>>();
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0], "value");
  EXPECT_EQ(fields[1], "int");
  EXPECT_EQ(fields[3], "DataType");
  Function find_fields = Function::GetGlobalRequired("ferry.FindNodeFields");
  EXPECT_EQ(find_fields("test.IntImm").cast<Array<String>>().size(), 4u);
  EXPECT_TRUE(find_fields("ferry.Array").is_none());  // registered, but not a node
  EXPECT_TRUE(find_fields("no.such.Type").is_none());
  ExpectError([&] { Function::GetGlobalRequired("ferry.NodeFields")("ferry.Array"); }, "ValueError",
              {"no node type", "ferry.Array"});
  EXPECT_EQ(Function::GetGlobalRequired("ferry.Repr")(IntImm(7)).cast<std::string>(),
            "test.IntImm(value=7, dtype=int64)");
  ExpectError([&] { make("test.Add", "a"); }, "TypeError", {"pairs"});

  FerryAny out;
  ObjectRef obj = add.cast<ObjectRef>();
  ASSERT_EQ(FerryObjectGetAttr(details::ObjectUnsafe::GetHeader(obj.get()), "a", &out), 0);
  Any a = Any::FromOwned(out);
  EXPECT_EQ(a.cast<IntImm>()->value, 1);
  EXPECT_EQ(FerryObjectGetAttr(details::ObjectUnsafe::GetHeader(obj.get()), "zz", &out), -1);
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  Error error(details::ObjectUnsafe::PtrFromOwned<Object>(
      details::ObjectUnsafe::FromHeader(static_cast<FerryObject*>(err))));
  EXPECT_EQ(error.kind(), "AttributeError");
}

TEST(Reflection, SetAttrWritesFieldsOfMutableTypesInPlace) {
  ObjectRef node = MakeNode("test.MutableChild", {{"count", Any(1)},
                                                  {"small", Any(2)},
                                                  {"label", Any("a")},
                                                  {"expr", Any()},
                                                  {"items", Any(Array<Expr>())},
                                                  {"ratio", Any(0.5)}});
  ObjectRef other_holder = node;  // no copy-on-write: every holder sees the write
  SetAttr(node, "count", 42);
  SetAttr(node, "label", "written");
  SetAttr(node, "expr", IntImm(3));
  SetAttr(node, "ratio", 2.5);  // a field of the subclass, mutable through its parent
  EXPECT_EQ(GetAttr(other_holder, "count").cast<int64_t>(), 42);
  EXPECT_EQ(GetAttr(other_holder, "label").cast<String>(), "written");
  EXPECT_EQ(GetAttr(other_holder, "expr").cast<IntImm>()->value, 3);
  EXPECT_EQ(GetAttr(other_holder, "ratio").cast<double>(), 2.5);
  SetAttr(node, "expr", Any());  // Optional accepts None
  EXPECT_TRUE(GetAttr(node, "expr").is_none());
}

TEST(Reflection, SetAttrErrorsLeaveTheObjectUnchanged) {
  ObjectRef node = MakeNode("test.Mutable", {{"count", Any(7)},
                                             {"small", Any(1)},
                                             {"label", Any("keep")},
                                             {"expr", Any()},
                                             {"items", Any(Array<Expr>())}});
  ExpectError([&] { SetAttr(node, "count", "text"); }, "TypeError", {"'count'", "test.Mutable"});
  ExpectError([&] { SetAttr(node, "label", 3); }, "TypeError", {"'label'"});
  ExpectError([&] { SetAttr(node, "items", Array<Any>{1}); }, "TypeError", {"'items'"});
  ExpectError([&] { SetAttr(node, "small", int64_t{1} << 40); }, "OverflowError", {"'small'"});
  ExpectError([&] { SetAttr(node, "nope", 1); }, "AttributeError", {"'test.Mutable'", "'nope'"});
  EXPECT_EQ(GetAttr(node, "count").cast<int64_t>(), 7);
  EXPECT_EQ(GetAttr(node, "label").cast<String>(), "keep");
  EXPECT_EQ(GetAttr(node, "small").cast<int64_t>(), 1);
  EXPECT_EQ(GetAttr(node, "items").cast<Array<Expr>>().size(), 0u);
  // A type that is not _type_mutable is read-only through reflection.
  IntImm imm(5);
  ExpectError([&] { SetAttr(imm, "value", 6); }, "AttributeError", {"'value'", "read-only"});
  EXPECT_EQ(imm->value, 5);
  ExpectError([&] { SetAttr(ObjectRef(), "x", 1); }, "AttributeError", {"None"});
}

TEST(Reflection, SetAttrThroughTheGlobalAndTheCApi) {
  ObjectRef node = MakeNode("test.Mutable", {{"count", Any(0)},
                                             {"small", Any(0)},
                                             {"label", Any("")},
                                             {"expr", Any()},
                                             {"items", Any(Array<Expr>())}});
  Function::GetGlobalRequired("ferry.NodeSetAttr")(node, "count", 5);
  EXPECT_EQ(GetAttr(node, "count").cast<int64_t>(), 5);
  FerryObjectHandle h = details::ObjectUnsafe::GetHeader(node.get());
  AnyView value(int64_t{9});
  ASSERT_EQ(FerryObjectSetAttr(h, "count", value.raw()), 0);
  EXPECT_EQ(GetAttr(node, "count").cast<int64_t>(), 9);
  AnyView bad("not an int");
  EXPECT_EQ(FerryObjectSetAttr(h, "count", bad.raw()), -1);
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  Error error(details::ObjectUnsafe::PtrFromOwned<Object>(
      details::ObjectUnsafe::FromHeader(static_cast<FerryObject*>(err))));
  EXPECT_EQ(error.kind(), "TypeError");
  EXPECT_EQ(GetAttr(node, "count").cast<int64_t>(), 9);
}

}  // namespace
