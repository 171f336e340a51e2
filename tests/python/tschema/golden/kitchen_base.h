// The base of the kitchen IR, edited in place by tschema. Hand-written text around the regions
// stays as it is: tabs	here, a non-ASCII name (Zoë), and the regions' own line endings.
#ifndef KITCHEN_BASE_H_
#define KITCHEN_BASE_H_

#include <ferry/ferry.h>

#include <cstdint>
#include <utility>

namespace kitchen {

// tschema: ExprNode
// clang-format off
/// Base of the kitchen expressions.
class ExprNode : public ::ferry::Object {
 public:
  void VisitAttrs(::ferry::AttrVisitor*) {}
  bool SEqualReduce(const ExprNode*, ::ferry::SEqualReducer) const { return true; }
  void SHashReduce(::ferry::SHashReducer) const {}

  static constexpr const char* _type_key = "kitchen.Expr";
  static constexpr int32_t _type_child_slots = 16;
  FERRY_DECLARE_BASE_OBJECT_INFO(ExprNode, ::ferry::Object);
};

/// Reference to ExprNode.
class Expr : public ::ferry::ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Expr, ::ferry::ObjectRef, ExprNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(ExprNode);
};
// clang-format on
// tschema: end

// tschema: VarNode
// clang-format off
/// A variable, compared by where it is defined.
class VarNode : public ExprNode {
 public:
  /// The name, only a hint.
  ::ferry::String name;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("name", &name);
  }

  static constexpr const char* _type_key = "kitchen.Var";
  FERRY_DECLARE_FINAL_OBJECT_INFO(VarNode, ExprNode);
  // tschema: custom-begin
  /// Variables compare by where they are defined, never by name.
  bool SEqualReduce(const VarNode* other, ::ferry::SEqualReducer equal) const {
    return equal.FreeVarEqualImpl(this, other);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const { hash_reduce.FreeVarHashImpl(this); }
  // tschema: custom-end
};

/// Reference to VarNode.
class Var : public Expr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  explicit Var(::ferry::String name) {
    ::ferry::ObjectPtr<VarNode> n = ::ferry::make_object<VarNode>();
    n->name = std::move(name);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Var, Expr, VarNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(VarNode);
};
// clang-format on
// tschema: end

}  // namespace kitchen

#endif  // KITCHEN_BASE_H_
