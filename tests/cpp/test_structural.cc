// Tests of ferry/reflection/structural.h: structural equality and hashing, definition sites,
// free variables, sharing, mismatch paths, deep chains and random trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "structural_internal.h"
#include "test_ir.h"

namespace {

using namespace test_ir;

/// A node whose reducers take an ObjectRef field, a temporary ObjectRef and a String field:
/// the reducers hand such references to the walk without reading them (kIsWalkedRef).
class BoxNode : public Object {
 public:
  ObjectRef item;
  String label;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("item", &item);
    v->Visit("label", &label);
  }
  bool SEqualReduce(const BoxNode* other, SEqualReducer equal) const {
    return equal(item, other->item) && equal(label, other->label) &&
           equal(ObjectRef(item), ObjectRef(other->item));  // a temporary: kept alive
  }
  void SHashReduce(SHashReducer hash) const {
    hash(item);
    hash(label);
    hash(ObjectRef(item));
  }
  static constexpr const char* _type_key = "test.Box";
  FERRY_DECLARE_FINAL_OBJECT_INFO(BoxNode, Object);
};
FERRY_REGISTER_NODE_TYPE(BoxNode);

ObjectRef Box(ObjectRef item, String label = String("l")) {
  auto n = make_object<BoxNode>();
  n->item = std::move(item);
  n->label = std::move(label);
  return ObjectRef(n);
}

/// An IR-like node with fields of every kind the reducers handle inline (ints, an enum, a
/// double, a bool, a DataType, a String), two Array fields (of objects and of ints) between
/// object fields, and an Optional child: the reducers' fast paths (plain values compared and
/// hashed without a call, arrays' elements handed to the walk at once) must give the results
/// of the generic path.
enum class MixOp : int32_t { kLeaf = 0, kAdd = 1 };
class MixNode : public Object {
 public:
  int64_t id = 0;
  double scale = 1.0;
  String name;
  MixOp op = MixOp::kLeaf;
  bool flag = false;
  DataType dtype = DataType::Int(32);
  ObjectRef first;
  Array<ObjectRef> args;
  Array<int64_t> shape;
  Optional<ObjectRef> body;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("id", &id);
    v->Visit("scale", &scale);
    v->Visit("name", &name);
    v->Visit("op", &op);
    v->Visit("flag", &flag);
    v->Visit("dtype", &dtype);
    v->Visit("first", &first);
    v->Visit("args", &args);
    v->Visit("shape", &shape);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const MixNode* other, SEqualReducer equal) const {
    return equal(id, other->id) && equal(scale, other->scale) && equal(name, other->name) &&
           equal(op, other->op) && equal(flag, other->flag) && equal(dtype, other->dtype) &&
           equal(first, other->first) && equal(args, other->args) && equal(shape, other->shape) &&
           equal(body, other->body);
  }
  void SHashReduce(SHashReducer hash) const {
    hash(id);
    hash(scale);
    hash(name);
    hash(op);
    hash(flag);
    hash(dtype);
    hash(first);
    hash(args);
    hash(shape);
    hash(body);
  }
  static constexpr const char* _type_key = "test.Mix";
  FERRY_DECLARE_FINAL_OBJECT_INFO(MixNode, Object);
};
FERRY_REGISTER_ENUM(MixOp, "test.MixOp", {{MixOp::kLeaf, "Leaf"}, {MixOp::kAdd, "Add"}});
FERRY_REGISTER_NODE_TYPE(MixNode);

/// A MixNode tree of `depth` levels: inner nodes have two children in `args`, a leaf in
/// `first` and one in `body` at even depths.
ObjectPtr<MixNode> MixTree(int depth, int64_t id = 1) {
  auto n = make_object<MixNode>();
  n->id = id;
  n->scale = 0.25 * static_cast<double>(id);
  n->name = String(id % 2 == 0 ? "v" + std::to_string(id) : "long_name_" + std::to_string(id));
  n->shape = Array<int64_t>{id, 2 * id};
  if (depth > 0) {
    n->op = MixOp::kAdd;
    n->flag = id % 3 == 0;
    n->first = ObjectRef(MixTree(0, 1000 + id));
    n->args = Array<ObjectRef>{ObjectRef(MixTree(depth - 1, 2 * id)),
                               ObjectRef(MixTree(depth - 1, 2 * id + 1))};
    if (depth % 2 == 0) n->body = ObjectRef(MixTree(0, 3000 + id));
  }
  return n;
}

bool Equal(const AnyView& a, const AnyView& b, bool map_free_vars = false) {
  return StructuralEqual()(a, b, map_free_vars);
}
uint64_t Hash(const AnyView& a, bool map_free_vars = false) {
  return StructuralHash()(a, map_free_vars);
}

TEST(Structural, PlainValuesStringsAndContainers) {
  EXPECT_TRUE(Equal(1, 1));
  EXPECT_FALSE(Equal(1, 2));
  EXPECT_FALSE(Equal(1, 1.0)) << "an int and a float are different values";
  EXPECT_TRUE(Equal("abc", String("abc")));
  EXPECT_EQ(Hash("abc"), Hash(String("abc")));
  EXPECT_TRUE(Equal(Array<int64_t>{1, 2}, Array<int64_t>{1, 2}));
  EXPECT_FALSE(Equal(Array<int64_t>{1, 2}, Array<int64_t>{2, 1}));
  EXPECT_FALSE(Equal(Array<int64_t>{1}, Array<int64_t>{1, 1}));
  Map<String, int64_t> m1 = {{"a", 1}, {"b", 2}};
  Map<String, int64_t> m2 = {{"b", 2}, {"a", 1}};
  EXPECT_TRUE(Equal(m1, m2)) << "map order does not matter";
  EXPECT_EQ(Hash(m1), Hash(m2));
  EXPECT_FALSE(Equal(m1, Map<String, int64_t>{{"a", 1}, {"b", 3}}));
  EXPECT_TRUE(Equal(Shape({2, 3}), Shape({2, 3})));
  EXPECT_EQ(Hash(Shape({2, 3})), Hash(Shape({2, 3})));
  EXPECT_FALSE(Equal(Shape({2, 3}), Shape({3, 2})));
}

TEST(Structural, EmptyContainersAreValuesNotSharedObjects) {
  // Default-constructed Lists share the one empty Array as their data; JSON loads each empty
  // array as an object of its own. Structurally, both are two empty lists.
  Array<List<int64_t>> shared{List<int64_t>(), List<int64_t>()};
  Array<List<int64_t>> fresh{List<int64_t>(), List<int64_t>()};
  for (List<int64_t> list : fresh) {  // a List mutates in place: each gets an array of its own
    list.push_back(1);
    list.pop_back();
  }
  ASSERT_TRUE(fresh[0].empty() && fresh[1].empty());
  ASSERT_NE(fresh[0].get()->data.get(), fresh[1].get()->data.get());
  ASSERT_EQ(shared[0].get()->data.get(), shared[1].get()->data.get());
  EXPECT_TRUE(StructuralEqual()(shared, fresh));
  EXPECT_TRUE(StructuralEqual()(fresh, shared));
  EXPECT_EQ(StructuralHash()(shared), StructuralHash()(fresh));
  Any loaded = LoadJSON(SaveJSON(shared));
  EXPECT_TRUE(StructuralEqual()(loaded, shared));
  // An empty Map against an empty Array is still a mismatch.
  EXPECT_FALSE(StructuralEqual()(Array<Any>{Any(Array<Any>()), Any(Array<Any>())},
                                 Array<Any>{Any(Map<Any, Any>()), Any(Map<Any, Any>())}));
}

TEST(Structural, ObjectFieldsOfReducersKeepTheirMeaning) {
  // Strings in an ObjectRef field compare by content, None only with None, shapes by value,
  // arrays elementwise, other objects by their reducers: as when the field was an AnyView.
  const std::vector<std::pair<ObjectRef, ObjectRef>> same = {
      {String("abc"), String("abc")}, {ObjectRef(), ObjectRef()},
      {Shape({2, 3}), Shape({2, 3})}, {Array<int64_t>{1, 2}, Array<int64_t>{1, 2}},
      {IntImm(7), IntImm(7)},         {Box(IntImm(1)), Box(IntImm(1))},
  };
  for (const auto& [a, b] : same) {
    SCOPED_TRACE(details::AnyRepr(Any(a).raw()));
    EXPECT_TRUE(Equal(Box(a), Box(b)));
    EXPECT_EQ(Hash(Box(a)), Hash(Box(b)));
    EXPECT_EQ(StructuralMismatch(Box(a), Box(b)), std::nullopt);
  }
  const std::vector<std::pair<ObjectRef, ObjectRef>> different = {
      {String("abc"), String("abd")},   {ObjectRef(), String("")},
      {String("7"), IntImm(7)},         {Shape({2, 3}), Shape({3, 2})},
      {IntImm(7), IntImm(8)},           {ObjectRef(), IntImm(0)},
      {Box(IntImm(1)), Box(IntImm(2))}, {Array<int64_t>{1}, Array<int64_t>{2}},
  };
  for (const auto& [a, b] : different) {
    SCOPED_TRACE(details::AnyRepr(Any(a).raw()));
    EXPECT_FALSE(Equal(Box(a), Box(b)));
    EXPECT_FALSE(Equal(Box(b), Box(a)));
    EXPECT_NE(Hash(Box(a)), Hash(Box(b)));
    auto path = StructuralMismatch(Box(a), Box(b));
    ASSERT_TRUE(path.has_value());
    EXPECT_EQ(path->rfind("root.item", 0), 0u) << *path;
  }
  EXPECT_FALSE(Equal(Box(IntImm(1), String("x")), Box(IntImm(1), String("y"))));
  EXPECT_EQ(*StructuralMismatch(Box(IntImm(1), String("x")), Box(IntImm(1), String("y"))),
            "root.label");
  // A String field against one that holds the same text.
  EXPECT_EQ(Hash(Box(String("abc"))), Hash(Box(String(std::string("ab") + "c"))));
  // Strings never take part in the one-to-one mapping of shared objects: one shared string
  // equals two others of the same text.
  String shared("abc"), other1("abc"), other2("abc");
  const Array<ObjectRef> lhs{Box(shared), Box(shared)}, rhs{Box(other1), Box(other2)};
  EXPECT_TRUE(Equal(lhs, rhs));
  EXPECT_TRUE(Equal(rhs, lhs));
  EXPECT_EQ(Hash(lhs), Hash(rhs));
  EXPECT_TRUE(Equal(Array<ObjectRef>{shared, shared}, Array<ObjectRef>{other1, other2}));
}

TEST(Structural, MixedFieldNodesThroughTheReducersFastPaths) {
  const ObjectRef a(MixTree(4)), b(MixTree(4));
  EXPECT_TRUE(Equal(a, b));
  EXPECT_EQ(Hash(a), Hash(b));
  EXPECT_EQ(StructuralMismatch(a, b), std::nullopt);
  // Each field changed in a copy of the root: unequal, another hash, and the path names it.
  using Edit = void (*)(MixNode*);
  const std::vector<std::pair<Edit, std::string>> edits = {
      {[](MixNode* n) { n->id = 7; }, "root.id"},
      {[](MixNode* n) { n->scale = 0.5; }, "root.scale"},
      {[](MixNode* n) { n->name = String("other"); }, "root.name"},
      {[](MixNode* n) { n->name = String("long_name_2"); }, "root.name"},
      {[](MixNode* n) { n->op = MixOp::kLeaf; }, "root.op"},
      {[](MixNode* n) { n->flag = !n->flag; }, "root.flag"},
      {[](MixNode* n) { n->dtype = DataType::Int(64); }, "root.dtype"},
      {[](MixNode* n) { n->first = IntImm(1); }, "root.first"},
      {[](MixNode* n) { n->args = Array<ObjectRef>{n->args[0]}; }, "root.args"},
      {[](MixNode* n) {
         n->args = Array<ObjectRef>{n->args[0], ObjectRef(MixTree(0, 5))};
       },
       "root.args[1].id"},
      {[](MixNode* n) {
         n->shape = Array<int64_t>{1, 3};
       },
       "root.shape[1]"},
      {[](MixNode* n) { n->body = ObjectRef(); }, "root.body"},
      {[](MixNode* n) { n->body = ObjectRef(MixTree(0, 9)); }, "root.body.id"},
  };
  for (const auto& [edit, path] : edits) {
    SCOPED_TRACE(path);
    auto changed = make_object<MixNode>(*static_cast<const MixNode*>(b.get()));
    edit(changed.get());
    const ObjectRef c(changed);
    EXPECT_FALSE(Equal(a, c));
    EXPECT_FALSE(Equal(c, a));
    EXPECT_NE(Hash(a), Hash(c));
    EXPECT_EQ(StructuralMismatch(a, c).value_or("equal"), path);
  }
}

TEST(Structural, MixedFieldValuesCompareAsTheGenericPathDoes) {
  auto make = [](double scale, String name) {
    auto n = MixTree(0);
    n->scale = scale;
    n->name = std::move(name);
    return ObjectRef(n);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // -0.0 equals 0.0; a NaN equals the same NaN: the hashes agree.
  EXPECT_TRUE(Equal(make(0.0, "a"), make(-0.0, "a")));
  EXPECT_EQ(Hash(make(0.0, "a")), Hash(make(-0.0, "a")));
  EXPECT_TRUE(Equal(make(nan, "a"), make(nan, "a")));
  EXPECT_EQ(Hash(make(nan, "a")), Hash(make(nan, "a")));
  EXPECT_FALSE(Equal(make(nan, "a"), make(1.0, "a")));
  // A short text as an inline String and as a String object; a C ABI inline cell with other
  // bytes past its length.
  const String heap(details::MakeString("abc", 3));
  ASSERT_FALSE(heap.is_inline());
  FerryAny cell = String("abc").cell();
  cell.v_bytes[5] = 'x';
  const String padded = String::FromCell(cell);
  for (const String& same : {heap, padded, String("abc")}) {
    EXPECT_TRUE(Equal(make(1.0, "abc"), make(1.0, same)));
    EXPECT_EQ(Hash(make(1.0, "abc")), Hash(make(1.0, same)));
  }
  EXPECT_FALSE(Equal(make(1.0, "abc"), make(1.0, "abd")));
  EXPECT_NE(Hash(make(1.0, "abc")), Hash(make(1.0, "abd")));
  EXPECT_NE(Hash(make(1.0, "abcdefgh")), Hash(make(1.0, "abcdefgi")));
  EXPECT_TRUE(
      Equal(make(1.0, String(details::MakeString("abcdefghij", 10))), make(1.0, "abcdefghij")));
  EXPECT_EQ(Hash(make(1.0, String(details::MakeString("abcdefghij", 10)))),
            Hash(make(1.0, "abcdefghij")));
}

TEST(Structural, ArrayFieldsHashAlikeSharedOrNot) {
  // A node's array that only it holds is hashed in the node's frame (ReduceArray); one held
  // elsewhere too goes through the tables as an object. Both must give the same hash.
  const ObjectRef unique(MixTree(3));
  auto root = MixTree(3);
  const Array<ObjectRef> keep_args = root->args;  // now shared
  const Array<int64_t> keep_shape = root->shape;  // shared too
  const ObjectRef shared(root);
  EXPECT_TRUE(Equal(unique, shared));
  EXPECT_TRUE(Equal(shared, unique));
  EXPECT_EQ(Hash(unique), Hash(shared));
  // An array as the root, and inside another array.
  EXPECT_EQ(Hash(keep_args), Hash(static_cast<const MixNode*>(unique.get())->args));
  EXPECT_EQ(Hash(Array<ObjectRef>{shared}), Hash(Array<ObjectRef>{unique}));
  // Empty arrays: the shared default one and a fresh one.
  auto empty1 = MixTree(0), empty2 = MixTree(0);
  empty1->shape = Array<int64_t>();
  empty2->shape = Array<int64_t>{1};
  empty2->shape = Array<int64_t>(std::vector<int64_t>{});
  EXPECT_TRUE(Equal(ObjectRef(empty1), ObjectRef(empty2)));
  EXPECT_EQ(Hash(ObjectRef(empty1)), Hash(ObjectRef(empty2)));
  // Sharing must still agree: one array in two nodes against two equal arrays.
  auto l1 = MixTree(1, 4), l2 = MixTree(1, 4), r1 = MixTree(1, 4), r2 = MixTree(1, 4);
  l2->args = l1->args;
  const Array<ObjectRef> lhs{ObjectRef(l1), ObjectRef(l2)}, rhs{ObjectRef(r1), ObjectRef(r2)};
  EXPECT_FALSE(Equal(lhs, rhs));
  EXPECT_FALSE(Equal(rhs, lhs));
}

TEST(Structural, NodesCompareByTheirReducers) {
  Var x("x");
  EXPECT_TRUE(Equal(Add(x, IntImm(1)), Add(x, IntImm(1))));
  EXPECT_EQ(Hash(Add(x, IntImm(1))), Hash(Add(x, IntImm(1))));
  EXPECT_FALSE(Equal(Add(x, IntImm(1)), Add(x, IntImm(2))));
  EXPECT_FALSE(Equal(Add(x, IntImm(1)), Add(IntImm(1), x)));
  EXPECT_NE(Hash(Add(x, IntImm(1))), Hash(Add(IntImm(1), x)));
}

TEST(Structural, DefinitionSitesMapVariables) {
  Var x("x"), y("y");
  Expr lhs = Let(x, IntImm(1), Add(x, IntImm(1)));
  Expr rhs = Let(y, IntImm(1), Add(y, IntImm(1)));
  EXPECT_TRUE(Equal(lhs, rhs));
  EXPECT_EQ(Hash(lhs), Hash(rhs));
  EXPECT_FALSE(Equal(lhs, Let(y, IntImm(1), Add(x, IntImm(1))))) << "x is free on the right";
  // fn(a, b) => a + b equals fn(c, d) => c + d, not fn(c, d) => d + c.
  Var a("a"), b("b"), c("c"), d("d");
  EXPECT_TRUE(Equal(Func({a, b}, Add(a, b)), Func({c, d}, Add(c, d))));
  EXPECT_EQ(Hash(Func({a, b}, Add(a, b))), Hash(Func({c, d}, Add(c, d))));
  EXPECT_FALSE(Equal(Func({a, b}, Add(a, b)), Func({c, d}, Add(d, c))));
}

TEST(Structural, MapsOfDefinitionsHashAlikeInAnyOrder) {
  // Each entry numbers the variables it defines from the same start, as equality pairs the
  // entries by key whatever their order; what comes after the map is numbered past them all.
  auto let = [](const char* name, int64_t v) {
    Var x(name);
    return Let(x, IntImm(v), Add(x, IntImm(v)));
  };
  Map<String, Expr> ab = {{"a", let("x", 1)}, {"b", let("y", 2)}};
  Map<String, Expr> ba = {{"b", let("y", 2)}, {"a", let("x", 1)}};
  ASSERT_TRUE(Equal(ab, ba));
  EXPECT_EQ(Hash(ab), Hash(ba));
  EXPECT_EQ(Hash(ab, true), Hash(ba, true));
  Map<String, Expr> ab3 = {{"a", let("x", 1)}, {"b", let("y", 3)}};
  EXPECT_FALSE(Equal(ab, ab3));
  EXPECT_NE(Hash(ab), Hash(ab3));
  // Definitions after a map, and maps in maps.
  Var p("p"), q("q");
  Array<Any> after_ab = {ab, Func({p}, Add(p, IntImm(1)))};
  Array<Any> after_ba = {ba, Func({q}, Add(q, IntImm(1)))};
  ASSERT_TRUE(Equal(after_ab, after_ba));
  EXPECT_EQ(Hash(after_ab), Hash(after_ba));
  Map<String, Any> outer1 = {{"m", ab}, {"n", let("z", 5)}};
  Map<String, Any> outer2 = {{"n", let("z", 5)}, {"m", ba}};
  ASSERT_TRUE(Equal(outer1, outer2));
  EXPECT_EQ(Hash(outer1), Hash(outer2));
}

TEST(Structural, ObjectMapKeysMatchThemselvesOrAnEarlierPairing) {
  Var x("x"), y("y");
  Map<Any, int64_t> mx = {{x, 1}}, my = {{y, 1}};
  EXPECT_TRUE(Equal(mx, Map<Any, int64_t>{{x, 1}}));
  EXPECT_FALSE(Equal(mx, my)) << "different free variables";
  EXPECT_TRUE(Equal(Array<Any>{x, mx}, Array<Any>{y, my}, true)) << "x was paired with y";
  EXPECT_FALSE(Equal(Array<Any>{mx, x}, Array<Any>{my, y}, true)) << "not yet paired";
}

TEST(Structural, FreeVariablesMapOnlyOnRequest) {
  Var x("x"), y("y");
  EXPECT_FALSE(Equal(Add(x, IntImm(1)), Add(y, IntImm(1))));
  EXPECT_TRUE(Equal(Add(x, IntImm(1)), Add(y, IntImm(1)), true));
  EXPECT_EQ(Hash(Add(x, IntImm(1)), true), Hash(Add(y, IntImm(1)), true));
  // A mapping is one to one: x+x cannot map to x+y.
  EXPECT_FALSE(Equal(Add(x, x), Add(x, y), true));
  EXPECT_FALSE(Equal(Add(x, y), Add(y, y), true));
}

TEST(Structural, SharingMustAgree) {
  Expr s = Add(IntImm(1), IntImm(2));
  Expr t = Add(IntImm(1), IntImm(2));
  Expr u = Add(IntImm(1), IntImm(2));
  EXPECT_TRUE(Equal(Add(s, s), Add(t, t)));
  // As in TVM, each object maps to one object of the other side.
  EXPECT_FALSE(Equal(Add(s, s), Add(t, u)));
  EXPECT_EQ(Hash(Add(s, s)), Hash(Add(t, u))) << "unequal values may share a hash";
}

TEST(Structural, UnsharedObjectsSkipTheTablesButSharingStillAgrees) {
  // Objects with one reference each stay out of the memo and mapping tables. Sharing on one
  // side only must still be a difference, whichever side shares.
  Expr s = Add(IntImm(1), IntImm(2));
  auto fresh = [] { return Expr(Add(IntImm(1), IntImm(2))); };
  EXPECT_FALSE(Equal(Add(s, s), Add(fresh(), fresh())));
  EXPECT_FALSE(Equal(Add(fresh(), fresh()), Add(s, s)));
  EXPECT_TRUE(Equal(Add(fresh(), IntImm(3)), Add(fresh(), IntImm(3))));
  // Holding more references (memoized) or none (not) gives the same hash.
  Add tree(Add(fresh(), IntImm(3)), fresh());
  const uint64_t unshared = Hash(tree);
  Expr held_a = tree->a, held_b = tree->b;
  EXPECT_EQ(Hash(tree), unshared);
  EXPECT_TRUE(Equal(tree, Add(Add(fresh(), IntImm(3)), fresh())));
}

TEST(Structural, StringFieldsCompareWholeWithEmbeddedNul) {
  auto make = [](const char* text, size_t size) {
    auto n = make_object<AttrsNode>();
    n->text = std::string(text, size);
    return ObjectRef(n);
  };
  EXPECT_FALSE(Equal(make("a\0b", 3), make("a\0c", 3)));
  EXPECT_NE(Hash(make("a\0b", 3)), Hash(make("a\0c", 3)));
  EXPECT_TRUE(Equal(make("a\0b", 3), make("a\0b", 3)));
}

TEST(Structural, CycleThroughABorrowedRootEnds) {
  // The only reference to the root is its own field, so its count is 1: the walks must still
  // see it as met twice.
  auto n = make_object<AttrsNode>();
  n->anything = ObjectRef(n);
  Object* raw = n.get();
  n.reset();
  FerryAny cell;
  cell.type_index = raw->type_index();
  cell.small_len = 0;
  cell.v_obj = details::ObjectUnsafe::GetHeader(raw);
  const AnyView& view = *reinterpret_cast<const AnyView*>(&cell);
  EXPECT_EQ(Hash(view), Hash(view));
  EXPECT_TRUE(Equal(view, view));
  ObjectRef hold = GetRef<ObjectRef>(raw);  // break the cycle, then free it
  static_cast<AttrsNode*>(raw)->anything = Any();
}

TEST(Structural, FieldDefaultsAndIdentity) {
  auto make = [](int64_t count, const char* key) {
    auto n = make_object<AttrsNode>();
    n->text = "t";
    n->count = count;
    n->items = {IntImm(1)};
    n->table = {{key, IntImm(2)}};
    n->shape = {2};
    return ObjectRef(n);
  };
  EXPECT_TRUE(Equal(make(1, "k"), make(1, "k")));
  EXPECT_EQ(Hash(make(1, "k")), Hash(make(1, "k")));
  EXPECT_FALSE(Equal(make(1, "k"), make(2, "k")));
  EXPECT_FALSE(Equal(make(1, "k"), make(1, "j")));
  ObjectRef o1(make_object<OpaqueNode>()), o2(make_object<OpaqueNode>());
  EXPECT_TRUE(Equal(o1, o1));
  EXPECT_FALSE(Equal(o1, o2)) << "unregistered objects compare by identity";
}

TEST(Structural, ReportsTheFirstMismatchingPath) {
  Var x("x");
  Expr lhs = Let(x, IntImm(1), Add(x, Add(x, IntImm(2))));
  Expr rhs = Let(x, IntImm(1), Add(x, Add(x, IntImm(3))));
  EXPECT_EQ(StructuralMismatch(lhs, rhs).value_or("equal"), "root.body.b.b.value");
  EXPECT_FALSE(StructuralMismatch(lhs, lhs).has_value());
  Array<Expr> la = {IntImm(1), IntImm(2)};
  Array<Expr> ra = {IntImm(1), IntImm(5)};
  EXPECT_EQ(StructuralMismatch(la, ra).value_or("equal"), "root[1].value");
  Map<String, Expr> lm = {{"k", IntImm(1)}};
  Map<String, Expr> rm = {{"k", x}};
  EXPECT_EQ(StructuralMismatch(lm, rm).value_or("equal"), "root[\"k\"]");
}

TEST(Structural, SharedDagIsLinear) {
  // 2^40 paths, 41 nodes: only memoization finishes this.
  Expr lhs = IntImm(1), rhs = IntImm(1);
  for (int i = 0; i < 40; ++i) {
    lhs = Add(lhs, lhs);
    rhs = Add(rhs, rhs);
  }
  EXPECT_TRUE(Equal(lhs, rhs));
  EXPECT_EQ(Hash(lhs), Hash(rhs));
}

TEST(Structural, MillionDeepChainNeedsNoRecursion) {
  Expr lhs = IntImm(0), rhs = IntImm(0);
  for (int i = 0; i < 1000000; ++i) {
    lhs = Add(lhs, IntImm(i));
    rhs = Add(rhs, IntImm(i));
  }
  EXPECT_TRUE(Equal(lhs, rhs));
  EXPECT_EQ(Hash(lhs), Hash(rhs));
  rhs = Add(rhs, IntImm(-1));
  EXPECT_FALSE(Equal(lhs, rhs));
}

/// A random expression over `vars`, with lets that bind fresh variables.
Expr RandomExpr(std::mt19937* rng, std::vector<Var>* vars, int depth, int* counter) {
  std::uniform_int_distribution<int> pick(0, 3);
  int kind = depth == 0 ? pick(*rng) % 2 : pick(*rng);
  if (kind == 0 || (kind == 1 && vars->empty())) return IntImm((*rng)() % 3);
  if (kind == 1) return (*vars)[(*rng)() % vars->size()];
  if (kind == 2) {
    Expr a = RandomExpr(rng, vars, depth - 1, counter);
    return Add(a, RandomExpr(rng, vars, depth - 1, counter));
  }
  Var v("v" + std::to_string((*counter)++));
  Expr value = RandomExpr(rng, vars, depth - 1, counter);
  vars->push_back(v);
  Expr body = RandomExpr(rng, vars, depth - 1, counter);
  vars->pop_back();
  return Let(v, value, body);
}

TEST(Structural, EqualImpliesEqualHashOverRandomTrees) {
  int equal_pairs = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    // Same seed, fresh variables: alpha-equivalent trees.
    int c1 = 0, c2 = 0;
    std::vector<Var> v1, v2;
    std::mt19937 r1(seed), r2(seed);
    Expr a = RandomExpr(&r1, &v1, 6, &c1);
    Expr b = RandomExpr(&r2, &v2, 6, &c2);
    ASSERT_TRUE(Equal(a, b)) << Repr(a);
    ASSERT_EQ(Hash(a), Hash(b)) << Repr(a);
    // A different seed: whenever equal, the hashes must agree too.
    std::mt19937 r3(seed + 7919);
    int c3 = 0;
    std::vector<Var> v3;
    Expr c = RandomExpr(&r3, &v3, 3, &c3);
    Expr d = RandomExpr(&r1, &v1, 3, &c1);
    if (Equal(c, d)) {
      ++equal_pairs;
      ASSERT_EQ(Hash(c), Hash(d)) << Repr(c) << " vs " << Repr(d);
    }
  }
  EXPECT_GT(equal_pairs, 0) << "the random pairs should sometimes be equal";
}

/// Sets the walks' recursion limit for one scope (structural_internal.h).
struct RecursionLimit {
  explicit RecursionLimit(int limit) { details::SetStructuralRecursionLimit(limit); }
  ~RecursionLimit() { details::SetStructuralRecursionLimit(-1); }
};

/// A chain link whose reducers note how deep in the C++ stack they run.
class ProbeNode : public Object {
 public:
  ObjectRef next;
  void VisitAttrs(AttrVisitor* v) { v->Visit("next", &next); }
  bool SEqualReduce(const ProbeNode* other, SEqualReducer equal) const {
    Note();
    return equal(next, other->next);
  }
  void SHashReduce(SHashReducer hash) const {
    Note();
    hash(next);
  }
  static void Note() {
    lowest = std::min(lowest, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  }
  static inline thread_local uintptr_t lowest = UINTPTR_MAX;
  static constexpr const char* _type_key = "test.Probe";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ProbeNode, Object);
};
FERRY_REGISTER_NODE_TYPE(ProbeNode);

ObjectRef ProbeChain(int depth) {
  ObjectRef node;
  for (int i = 0; i < depth; ++i) {
    auto n = make_object<ProbeNode>();
    n->next = node;
    node = ObjectRef(n);
  }
  return node;
}

/// How many bytes of the C++ stack below this call `walk` used (the deepest reducer's frame).
template <typename Walk>
__attribute__((noinline)) uintptr_t StackUse(Walk walk) {
  ProbeNode::lowest = UINTPTR_MAX;
  const auto top = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  walk();
  return top - ProbeNode::lowest;
}

TEST(Structural, TheRecursionUsesABoundedStack) {
  // Past the recursion limit the walks go on their own stacks: a chain 10x deeper takes no
  // more of the C++ stack.
  const ObjectRef a = ProbeChain(1000), b = ProbeChain(1000);
  const ObjectRef c = ProbeChain(10000), d = ProbeChain(10000);
  const uintptr_t hash_1k = StackUse([&] { Hash(a); });
  const uintptr_t hash_10k = StackUse([&] { Hash(c); });
  const uintptr_t equal_1k = StackUse([&] { EXPECT_TRUE(Equal(a, b)); });
  const uintptr_t equal_10k = StackUse([&] { EXPECT_TRUE(Equal(c, d)); });
  EXPECT_EQ(hash_10k, hash_1k);
  EXPECT_EQ(equal_10k, equal_1k);
  // What a level takes, at the default limit (256) against none.
  const ObjectRef e = ProbeChain(300);
  const uintptr_t hash_300 = StackUse([&] { Hash(e); });
  const uintptr_t equal_300 = StackUse([&] { Equal(e, e); });
  RecursionLimit none(0);
  const uintptr_t hash_flat = StackUse([&] { Hash(e); });
  const uintptr_t equal_flat = StackUse([&] { Equal(e, e); });
  ASSERT_GT(hash_300, hash_flat);
  ASSERT_GT(equal_300, equal_flat);
  std::printf("stack per level: hash %zu, equality %zu bytes\n",
              static_cast<size_t>((hash_300 - hash_flat) / 256),
              static_cast<size_t>((equal_300 - equal_flat) / 256));
}

/// A chain of `depth` lets, each binding a fresh variable used in the next value, ending in
/// the sum of the last variable and `last`.
Expr LetChain(int depth, int64_t last) {
  std::vector<Var> vars;
  for (int i = 0; i < depth; ++i) vars.push_back(Var("v" + std::to_string(i)));
  Expr body = Add(vars.back(), IntImm(last));
  for (int i = depth - 1; i >= 0; --i) {
    body = Let(vars[i], i == 0 ? Expr(IntImm(0)) : Expr(Add(vars[i - 1], IntImm(i))), body);
  }
  return body;
}

/// A chain of `depth` MixNodes, each the only argument of the one above, with a Func that
/// defines a variable in its `body` at every third level and a map of lets at every fifth.
ObjectRef MixChain(int depth, int64_t leaf) {
  ObjectRef node(MixTree(0, leaf));
  for (int i = 0; i < depth; ++i) {
    auto n = MixTree(0, i);
    n->args = Array<ObjectRef>{node, IntImm(i)};
    if (i % 3 == 0) {
      Var x("x");
      n->body = ObjectRef(Func({x}, Add(x, IntImm(i))));
    }
    if (i % 5 == 0) {
      Var y("y");
      n->first = Map<String, Expr>{{"k", Let(y, IntImm(i), y)}, {"j", IntImm(i)}};
    }
    node = ObjectRef(n);
  }
  return node;
}

/// What the three walks give on `pairs` (and each pair's parts hashed alone).
std::vector<std::string> WalkResults(const std::vector<std::pair<Any, Any>>& pairs) {
  std::vector<std::string> out;
  for (const auto& [a, b] : pairs) {
    for (bool map_free_vars : {false, true}) {
      out.push_back(std::to_string(Hash(a, map_free_vars)) + " " +
                    std::to_string(Hash(b, map_free_vars)) + " " +
                    std::to_string(Equal(a, b, map_free_vars)) + " " +
                    StructuralMismatch(a, b, map_free_vars).value_or("equal"));
    }
  }
  return out;
}

TEST(Structural, TheRecursionLimitChangesNoResult) {
  // Below the limit the walks recurse, children walked as the reducers meet them; past it they
  // go on their stacks. Every limit gives the same hashes, results and mismatch paths.
  std::vector<std::pair<Any, Any>> pairs;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    int c1 = 0, c2 = 0, c3 = 0;
    std::vector<Var> v1, v2, v3;
    std::mt19937 r1(seed), r2(seed), r3(seed + 7919);
    Expr a = RandomExpr(&r1, &v1, 5, &c1);
    pairs.emplace_back(a, RandomExpr(&r2, &v2, 5, &c2));
    pairs.emplace_back(a, RandomExpr(&r3, &v3, 5, &c3));
  }
  pairs.emplace_back(ObjectRef(MixTree(5)), ObjectRef(MixTree(5)));
  auto edited = MixTree(5);
  static_cast<MixNode*>(
      const_cast<Object*>(static_cast<const MixNode*>(edited->args[1].get())->args[0].get()))
      ->name = String("other");
  pairs.emplace_back(ObjectRef(MixTree(5)), ObjectRef(edited));
  pairs.emplace_back(MixChain(40, 1), MixChain(40, 1));
  pairs.emplace_back(MixChain(40, 1), MixChain(40, 2));
  pairs.emplace_back(LetChain(30, 1), LetChain(30, 1));
  pairs.emplace_back(LetChain(30, 1), LetChain(30, 2));
  Var x("x"), y("y");
  pairs.emplace_back(Array<Any>{x, Map<Any, int64_t>{{x, 1}}},
                     Array<Any>{y, Map<Any, int64_t>{{y, 1}}});
  Expr dag_l = IntImm(1), dag_r = IntImm(1);
  for (int i = 0; i < 12; ++i) {
    dag_l = Add(dag_l, dag_l);
    dag_r = Add(dag_r, dag_r);
  }
  pairs.emplace_back(dag_l, dag_r);
  auto shared = MixTree(3);
  const Array<ObjectRef> keep = shared->args;  // a shared array
  pairs.emplace_back(ObjectRef(shared), ObjectRef(MixTree(3)));
  pairs.emplace_back(Array<Any>{ObjectRef(shared), ObjectRef(shared)},
                     Array<Any>{ObjectRef(MixTree(3)), ObjectRef(MixTree(3))});
  pairs.emplace_back(Box(Box(IntImm(1))), Box(Box(IntImm(1))));
  pairs.emplace_back(Box(Box(IntImm(1))), Box(Box(IntImm(2))));

  const std::vector<std::string> expected = WalkResults(pairs);
  for (int limit : {0, 1, 2, 3, 4, 7, 30, 1000}) {
    SCOPED_TRACE(limit);
    RecursionLimit scope(limit);
    const std::vector<std::string> got = WalkResults(pairs);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "pair " << i / 2;
  }
  // The corpus has equal and unequal pairs, paths among them.
  EXPECT_NE(std::count_if(expected.begin(), expected.end(),
                          [](const std::string& r) { return r.find(" 1 equal") != r.npos; }),
            0);
  EXPECT_NE(std::count_if(expected.begin(), expected.end(),
                          [](const std::string& r) { return r.find(" 0 root") != r.npos; }),
            0);
}

TEST(Structural, ChainsPastTheRecursionLimitDefineBeforeUse) {
  // 600 lets: the walks recurse 256 levels and go on their stacks for the rest, with each
  // definition still met before its uses, at every depth.
  const Expr a = LetChain(600, 1), b = LetChain(600, 1), c = LetChain(600, 2);
  EXPECT_TRUE(Equal(a, b));
  EXPECT_EQ(Hash(a), Hash(b));
  EXPECT_FALSE(Equal(a, c));
  EXPECT_NE(Hash(a), Hash(c));
  std::string path = "root";
  for (int i = 0; i < 600; ++i) path += ".body";
  EXPECT_EQ(StructuralMismatch(a, c).value_or("equal"), path + ".b.value");
  const ObjectRef m1 = MixChain(700, 1), m2 = MixChain(700, 1), m3 = MixChain(700, 2);
  EXPECT_TRUE(Equal(m1, m2));
  EXPECT_EQ(Hash(m1), Hash(m2));
  EXPECT_FALSE(Equal(m1, m3));
  EXPECT_NE(Hash(m1), Hash(m3));
  RecursionLimit none(0);
  EXPECT_EQ(Hash(a), Hash(b));
  EXPECT_EQ(Hash(m1), Hash(m2));
  EXPECT_FALSE(Equal(a, c));
}

TEST(Structural, Globals) {
  Var x("x"), y("y");
  Function equal = Function::GetGlobalRequired("ferry.StructuralEqual");
  EXPECT_FALSE(equal(x, y, false).cast<bool>());
  EXPECT_TRUE(equal(x, y, true).cast<bool>());
  Function hash = Function::GetGlobalRequired("ferry.StructuralHash");
  EXPECT_EQ(hash(IntImm(3), false).cast<int64_t>(), static_cast<int64_t>(Hash(IntImm(3))));
  Function mismatch = Function::GetGlobalRequired("ferry.StructuralMismatch");
  EXPECT_EQ(mismatch(IntImm(1), IntImm(2), false).cast<std::string>(), "root.value");
  EXPECT_TRUE(mismatch(IntImm(1), IntImm(1), false).is_none());
}

}  // namespace
