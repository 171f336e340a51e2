// The nodes of the arith example IR. Each class between `// tschema: XNode` and
// `// tschema: end` is generated from schema/arith_schema.py (regenerate with
// `python -m ferry.tschema generate ...`, see CMakeLists.txt); the text between
// `// tschema: custom-begin` and `// tschema: custom-end` and everything outside the regions
// is written by hand and kept as it is.
#ifndef ARITH_NODES_H_
#define ARITH_NODES_H_

#include <ferry/ferry.h>

#include <cstdint>
#include <utility>

namespace arith {

// tschema: PrimExprNode
// clang-format off
/// Base of all arithmetic expressions.
class PrimExprNode : public ::ferry::Object {
 public:
  /// The data type of the value the expression computes.
  ::ferry::DataType dtype;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
  }
  bool SEqualReduce(const PrimExprNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
  }

  static constexpr const char* _type_key = "arith.PrimExpr";
  static constexpr int32_t _type_child_slots = 14;
  FERRY_DECLARE_BASE_OBJECT_INFO(PrimExprNode, ::ferry::Object);
};

/// Reference to PrimExprNode.
class PrimExpr : public ::ferry::ObjectRef {
 public:
  /// Makes a new node from its fields, inherited ones first.
  explicit PrimExpr(::ferry::DataType dtype) {
    ::ferry::ObjectPtr<PrimExprNode> n = ::ferry::make_object<PrimExprNode>();
    n->dtype = std::move(dtype);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(PrimExpr, ::ferry::ObjectRef, PrimExprNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(PrimExprNode);
};
// clang-format on
// tschema: end

// tschema: IntImmNode
// clang-format off
/// A constant integer.
class IntImmNode : public PrimExprNode {
 public:
  /// The integer.
  int64_t value = 0;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("value", &value);
  }
  bool SEqualReduce(const IntImmNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(value, other->value);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(value);
  }

  static constexpr const char* _type_key = "arith.IntImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntImmNode, PrimExprNode);
};

/// Reference to IntImmNode.
class IntImm : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  IntImm(::ferry::DataType dtype, int64_t value) {
    ::ferry::ObjectPtr<IntImmNode> n = ::ferry::make_object<IntImmNode>();
    n->dtype = std::move(dtype);
    n->value = value;
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(IntImm, PrimExpr, IntImmNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(IntImmNode);
};
// clang-format on
// tschema: end

// tschema: FloatImmNode
// clang-format off
/// A constant floating-point number.
class FloatImmNode : public PrimExprNode {
 public:
  /// The number.
  double value = 0;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("value", &value);
  }
  bool SEqualReduce(const FloatImmNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(value, other->value);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(value);
  }

  static constexpr const char* _type_key = "arith.FloatImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(FloatImmNode, PrimExprNode);
};

/// Reference to FloatImmNode.
class FloatImm : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  FloatImm(::ferry::DataType dtype, double value) {
    ::ferry::ObjectPtr<FloatImmNode> n = ::ferry::make_object<FloatImmNode>();
    n->dtype = std::move(dtype);
    n->value = value;
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(FloatImm, PrimExpr, FloatImmNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(FloatImmNode);
};
// clang-format on
// tschema: end

// tschema: VarNode
// clang-format off
/// A variable. Two variables are the same only if they are the same object; structural
/// equality maps free variables only on request and bound ones at their definition.
class VarNode : public PrimExprNode {
 public:
  /// The name, for printing only.
  ::ferry::String name_hint;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("name_hint", &name_hint);
  }

  static constexpr const char* _type_key = "arith.Var";
  FERRY_DECLARE_FINAL_OBJECT_INFO(VarNode, PrimExprNode);
  // tschema: custom-begin
  /// A variable equals only itself, unless the comparison maps free variables (or the variable
  /// was bound at a definition site, e.g. by Let); its name is only a hint.
  bool SEqualReduce(const VarNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal.FreeVarEqualImpl(this, other);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce.FreeVarHashImpl(this);
  }
  // tschema: custom-end
};

/// Reference to VarNode.
class Var : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Var(::ferry::DataType dtype, ::ferry::String name_hint) {
    ::ferry::ObjectPtr<VarNode> n = ::ferry::make_object<VarNode>();
    n->dtype = std::move(dtype);
    n->name_hint = std::move(name_hint);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Var, PrimExpr, VarNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(VarNode);
};
// clang-format on
// tschema: end

// tschema: BinaryOpNode
// clang-format off
/// Base of the operators with two operands.
class BinaryOpNode : public PrimExprNode {
 public:
  /// The left operand.
  PrimExpr a;
  /// The right operand.
  PrimExpr b;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const BinaryOpNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.BinaryOp";
  static constexpr int32_t _type_child_slots = 8;
  FERRY_DECLARE_BASE_OBJECT_INFO(BinaryOpNode, PrimExprNode);
};

/// Reference to BinaryOpNode.
class BinaryOp : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  BinaryOp(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<BinaryOpNode> n = ::ferry::make_object<BinaryOpNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(BinaryOp, PrimExpr, BinaryOpNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(BinaryOpNode);
};
// clang-format on
// tschema: end

// tschema: AddNode
// clang-format off
/// a + b.
class AddNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const AddNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.Add";
  FERRY_DECLARE_FINAL_OBJECT_INFO(AddNode, BinaryOpNode);
};

/// Reference to AddNode.
class Add : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Add(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<AddNode> n = ::ferry::make_object<AddNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Add, BinaryOp, AddNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(AddNode);
};
// clang-format on
// tschema: end

// tschema: SubNode
// clang-format off
/// a - b.
class SubNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const SubNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.Sub";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SubNode, BinaryOpNode);
};

/// Reference to SubNode.
class Sub : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Sub(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<SubNode> n = ::ferry::make_object<SubNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Sub, BinaryOp, SubNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(SubNode);
};
// clang-format on
// tschema: end

// tschema: MulNode
// clang-format off
/// a * b.
class MulNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const MulNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.Mul";
  FERRY_DECLARE_FINAL_OBJECT_INFO(MulNode, BinaryOpNode);
};

/// Reference to MulNode.
class Mul : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Mul(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<MulNode> n = ::ferry::make_object<MulNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Mul, BinaryOp, MulNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(MulNode);
};
// clang-format on
// tschema: end

// tschema: FloorDivNode
// clang-format off
/// a // b, rounding toward negative infinity.
class FloorDivNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const FloorDivNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.FloorDiv";
  FERRY_DECLARE_FINAL_OBJECT_INFO(FloorDivNode, BinaryOpNode);
};

/// Reference to FloorDivNode.
class FloorDiv : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  FloorDiv(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<FloorDivNode> n = ::ferry::make_object<FloorDivNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(FloorDiv, BinaryOp, FloorDivNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(FloorDivNode);
};
// clang-format on
// tschema: end

// tschema: MinNode
// clang-format off
/// min(a, b).
class MinNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const MinNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.Min";
  FERRY_DECLARE_FINAL_OBJECT_INFO(MinNode, BinaryOpNode);
};

/// Reference to MinNode.
class Min : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Min(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<MinNode> n = ::ferry::make_object<MinNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Min, BinaryOp, MinNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(MinNode);
};
// clang-format on
// tschema: end

// tschema: MaxNode
// clang-format off
/// max(a, b).
class MaxNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const MaxNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.Max";
  FERRY_DECLARE_FINAL_OBJECT_INFO(MaxNode, BinaryOpNode);
};

/// Reference to MaxNode.
class Max : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Max(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<MaxNode> n = ::ferry::make_object<MaxNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Max, BinaryOp, MaxNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(MaxNode);
};
// clang-format on
// tschema: end

// tschema: EQNode
// clang-format off
/// a == b, a bool.
class EQNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const EQNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.EQ";
  FERRY_DECLARE_FINAL_OBJECT_INFO(EQNode, BinaryOpNode);
};

/// Reference to EQNode.
class EQ : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  EQ(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<EQNode> n = ::ferry::make_object<EQNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(EQ, BinaryOp, EQNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(EQNode);
};
// clang-format on
// tschema: end

// tschema: LTNode
// clang-format off
/// a < b, a bool.
class LTNode : public BinaryOpNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  bool SEqualReduce(const LTNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(a, other->a) && equal(b, other->b);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(a);
    hash_reduce(b);
  }

  static constexpr const char* _type_key = "arith.LT";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LTNode, BinaryOpNode);
};

/// Reference to LTNode.
class LT : public BinaryOp {
 public:
  /// Makes a new node from its fields, inherited ones first.
  LT(::ferry::DataType dtype, PrimExpr a, PrimExpr b) {
    ::ferry::ObjectPtr<LTNode> n = ::ferry::make_object<LTNode>();
    n->dtype = std::move(dtype);
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(LT, BinaryOp, LTNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(LTNode);
};
// clang-format on
// tschema: end

// tschema: SelectNode
// clang-format off
/// condition ? true_value : false_value.
class SelectNode : public PrimExprNode {
 public:
  /// A bool expression.
  PrimExpr condition;
  /// The value when the condition holds.
  PrimExpr true_value;
  /// The value otherwise.
  PrimExpr false_value;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("condition", &condition);
    v->Visit("true_value", &true_value);
    v->Visit("false_value", &false_value);
  }
  bool SEqualReduce(const SelectNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal(condition, other->condition) &&
           equal(true_value, other->true_value) && equal(false_value, other->false_value);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce(condition);
    hash_reduce(true_value);
    hash_reduce(false_value);
  }

  static constexpr const char* _type_key = "arith.Select";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SelectNode, PrimExprNode);
};

/// Reference to SelectNode.
class Select : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Select(::ferry::DataType dtype, PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
    ::ferry::ObjectPtr<SelectNode> n = ::ferry::make_object<SelectNode>();
    n->dtype = std::move(dtype);
    n->condition = std::move(condition);
    n->true_value = std::move(true_value);
    n->false_value = std::move(false_value);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Select, PrimExpr, SelectNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(SelectNode);
};
// clang-format on
// tschema: end

// tschema: LetNode
// clang-format off
/// let var = value in body. `var` is a definition site: `let x = 1 in x + 1` equals
/// `let y = 1 in y + 1`.
class LetNode : public PrimExprNode {
 public:
  /// The variable bound in body.
  Var var;
  /// The value bound to it.
  PrimExpr value;
  /// The expression using it.
  PrimExpr body;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("dtype", &dtype);
    v->Visit("var", &var);
    v->Visit("value", &value);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const LetNode* other, ::ferry::SEqualReducer equal) const {
    return equal(dtype, other->dtype) && equal.DefEqual(var, other->var) &&
           equal(value, other->value) && equal(body, other->body);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(dtype);
    hash_reduce.DefHash(var);
    hash_reduce(value);
    hash_reduce(body);
  }

  static constexpr const char* _type_key = "arith.Let";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LetNode, PrimExprNode);
};

/// Reference to LetNode.
class Let : public PrimExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Let(::ferry::DataType dtype, Var var, PrimExpr value, PrimExpr body) {
    ::ferry::ObjectPtr<LetNode> n = ::ferry::make_object<LetNode>();
    n->dtype = std::move(dtype);
    n->var = std::move(var);
    n->value = std::move(value);
    n->body = std::move(body);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Let, PrimExpr, LetNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(LetNode);
};
// clang-format on
// tschema: end

// tschema: FunctionNode
// clang-format off
/// fn(params) => body. The parameters are definition sites.
class FunctionNode : public ::ferry::Object {
 public:
  /// The parameters.
  ::ferry::Array<Var> params;
  /// The result, in terms of the parameters.
  PrimExpr body;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("params", &params);
    v->Visit("body", &body);
  }
  bool SEqualReduce(const FunctionNode* other, ::ferry::SEqualReducer equal) const {
    return equal.DefEqual(params, other->params) && equal(body, other->body);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce.DefHash(params);
    hash_reduce(body);
  }

  static constexpr const char* _type_key = "arith.Function";
  FERRY_DECLARE_FINAL_OBJECT_INFO(FunctionNode, ::ferry::Object);
};

/// Reference to FunctionNode.
class Function : public ::ferry::ObjectRef {
 public:
  /// Makes a new node from its fields, inherited ones first.
  Function(::ferry::Array<Var> params, PrimExpr body) {
    ::ferry::ObjectPtr<FunctionNode> n = ::ferry::make_object<FunctionNode>();
    n->params = std::move(params);
    n->body = std::move(body);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Function, ::ferry::ObjectRef, FunctionNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(FunctionNode);
};
// clang-format on
// tschema: end

}  // namespace arith

#endif  // ARITH_NODES_H_
