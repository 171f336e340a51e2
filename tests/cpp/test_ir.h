// A small expression IR for the reflection, structural and JSON tests. Each test binary
// includes it from one .cc file, so the registrations below run once per binary.
#ifndef FERRY_TESTS_CPP_TEST_IR_H_
#define FERRY_TESTS_CPP_TEST_IR_H_

#include <ferry/ferry.h>

#include <string>
#include <utility>

namespace test_ir {

using namespace ferry;

class ExprNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Expr";
  static constexpr uint32_t _type_child_slots = 8;
  FERRY_DECLARE_BASE_OBJECT_INFO(ExprNode, Object);
};
class Expr : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Expr, ObjectRef, ExprNode);
};

class IntImmNode : public ExprNode {
 public:
  int64_t value = 0;
  DataType dtype = DataType("int64");
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("value", &value);
    v->Visit("dtype", &dtype);
  }
  bool SEqualReduce(const IntImmNode* other, SEqualReducer equal) const {
    return equal(value, other->value) && equal(dtype, other->dtype);
  }
  void SHashReduce(SHashReducer hash) const {
    hash(value);
    hash(dtype);
  }
  static constexpr const char* _type_key = "test.IntImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntImmNode, ExprNode);
};
class IntImm : public Expr {
 public:
  explicit IntImm(int64_t value) {
    auto n = make_object<IntImmNode>();
    n->value = value;
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(IntImm, Expr, IntImmNode);
};

class VarNode : public ExprNode {
 public:
  String name;
  void VisitAttrs(AttrVisitor* v) { v->Visit("name", &name); }
  bool SEqualReduce(const VarNode* other, SEqualReducer equal) const {
    return equal.FreeVarEqualImpl(this, other);
  }
  void SHashReduce(SHashReducer hash) const { hash.FreeVarHashImpl(this); }
  static constexpr const char* _type_key = "test.Var";
  FERRY_DECLARE_FINAL_OBJECT_INFO(VarNode, ExprNode);
};
class Var : public Expr {
 public:
  explicit Var(String name) {
    auto n = make_object<VarNode>();
    n->name = std::move(name);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Var, Expr, VarNode);
};

class AddNode : public ExprNode {
 public:
  Expr a, b;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const AddNode* other, SEqualReducer equal) const {
    return equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(SHashReducer hash) const {
    hash(a);
    hash(b);
  }
  static constexpr const char* _type_key = "test.Add";
  FERRY_DECLARE_FINAL_OBJECT_INFO(AddNode, ExprNode);
};
class Add : public Expr {
 public:
  Add(Expr a, Expr b) {
    auto n = make_object<AddNode>();
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Add, Expr, AddNode);
};

// let var = value in body: `var` is a definition site.
class LetNode : public ExprNode {
 public:
  Var var;
  Expr value, body;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("var", &var);
    v->Visit("value", &value);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const LetNode* other, SEqualReducer equal) const {
    return equal.DefEqual(var, other->var) && equal(value, other->value) &&
           equal(body, other->body);
  }
  void SHashReduce(SHashReducer hash) const {
    hash.DefHash(var);
    hash(value);
    hash(body);
  }
  static constexpr const char* _type_key = "test.Let";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LetNode, ExprNode);
};
class Let : public Expr {
 public:
  Let(Var var, Expr value, Expr body) {
    auto n = make_object<LetNode>();
    n->var = std::move(var);
    n->value = std::move(value);
    n->body = std::move(body);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Let, Expr, LetNode);
};

// fn(params) => body: compares every field through the generated default.
class FuncNode : public ExprNode {
 public:
  Array<Var> params;
  Expr body;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("params", &params);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const FuncNode* other, SEqualReducer equal) const {
    return equal.DefEqual(params, other->params) && equal(body, other->body);
  }
  void SHashReduce(SHashReducer hash) const {
    hash.DefHash(params);
    hash(body);
  }
  static constexpr const char* _type_key = "test.Func";
  FERRY_DECLARE_FINAL_OBJECT_INFO(FuncNode, ExprNode);
};
class Func : public Expr {
 public:
  Func(Array<Var> params, Expr body) {
    auto n = make_object<FuncNode>();
    n->params = std::move(params);
    n->body = std::move(body);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Func, Expr, FuncNode);
};

// Every kind of field, compared field by field without hand-written reducers.
class AttrsNode : public Object {
 public:
  bool flag = false;
  int32_t small = 0;
  double ratio = 0;
  std::string text;
  String name;
  DataType dtype = DataType("float32");
  Optional<Expr> maybe;
  Optional<int64_t> count;
  Array<Expr> items;
  Map<String, Expr> table;
  Shape shape;
  Any anything;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("flag", &flag);
    v->Visit("small", &small);
    v->Visit("ratio", &ratio);
    v->Visit("text", &text);
    v->Visit("name", &name);
    v->Visit("dtype", &dtype);
    v->Visit("maybe", &maybe);
    v->Visit("count", &count);
    v->Visit("items", &items);
    v->Visit("table", &table);
    v->Visit("shape", &shape);
    v->Visit("anything", &anything);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "test.Attrs";
  FERRY_DECLARE_FINAL_OBJECT_INFO(AttrsNode, Object);
};

// No default constructor: reflected, but not creatable by MakeNode.
class FixedNode : public Object {
 public:
  explicit FixedNode(int64_t v) : value(v) {}
  int64_t value;
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr const char* _type_key = "test.Fixed";
  FERRY_DECLARE_FINAL_OBJECT_INFO(FixedNode, Object);
};

// Never registered for reflection: compares by identity.
class OpaqueNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Opaque";
  FERRY_DECLARE_FINAL_OBJECT_INFO(OpaqueNode, Object);
};

// Fields writable through reflection (SetAttr, Python assignment); subclassed by MutableChildNode.
class MutableNode : public Object {
 public:
  int64_t count = 0;
  int32_t small = 0;
  String label;
  Optional<Expr> expr;
  Array<Expr> items;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("count", &count);
    v->Visit("small", &small);
    v->Visit("label", &label);
    v->Visit("expr", &expr);
    v->Visit("items", &items);
  }
  static constexpr bool _type_mutable = true;
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "test.Mutable";
  FERRY_DECLARE_BASE_OBJECT_INFO(MutableNode, Object);
};
class MutableChildNode : public MutableNode {
 public:
  double ratio = 0;
  void VisitAttrs(AttrVisitor* v) {
    MutableNode::VisitAttrs(v);
    v->Visit("ratio", &ratio);
  }
  static constexpr const char* _type_key = "test.MutableChild";
  FERRY_DECLARE_FINAL_OBJECT_INFO(MutableChildNode, MutableNode);
};

FERRY_REGISTER_NODE_TYPE(ExprNode);  // no fields: lets Python classes (py_class) extend it
FERRY_REGISTER_NODE_TYPE(IntImmNode);
FERRY_REGISTER_NODE_TYPE(VarNode);
FERRY_REGISTER_NODE_TYPE(AddNode);
FERRY_REGISTER_NODE_TYPE(LetNode);
FERRY_REGISTER_NODE_TYPE(FuncNode);
FERRY_REGISTER_NODE_TYPE(AttrsNode);
FERRY_REGISTER_NODE_TYPE(FixedNode);
FERRY_REGISTER_NODE_TYPE(MutableNode);
FERRY_REGISTER_NODE_TYPE(MutableChildNode);

}  // namespace test_ir

#endif  // FERRY_TESTS_CPP_TEST_IR_H_
