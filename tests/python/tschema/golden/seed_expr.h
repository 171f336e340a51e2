// Expressions of the seed IR. The classes between the tschema markers are generated from
// seed.py; everything else in this file is written by hand.
#ifndef SEED_EXPR_H_
#define SEED_EXPR_H_

#include <ferry/ferry.h>

#include <cstdint>
#include <utility>

namespace seed {

// tschema: BaseExprNode
// clang-format off
/// Base type of all the expressions.
class BaseExprNode : public ::ferry::Object {
 public:
  static constexpr const char* _type_key = "BaseExpr";
  static constexpr int32_t _type_child_slots = 4;
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseExprNode, ::ferry::Object);
};

/// Reference to BaseExprNode.
class BaseExpr : public ::ferry::ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(BaseExpr, ::ferry::ObjectRef, BaseExprNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(BaseExprNode);
};
// clang-format on
// tschema: end

// tschema: PrimExprNode
// clang-format off
/// Base node of all primitive expressions.
class PrimExprNode : public BaseExprNode {
 public:
  /// The runtime data type of the primitive expression.
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

  static constexpr const char* _type_key = "PrimExpr";
  static constexpr int32_t _type_child_slots = 1;
  FERRY_DECLARE_BASE_OBJECT_INFO(PrimExprNode, BaseExprNode);
};

/// Reference to PrimExprNode.
class PrimExpr : public BaseExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  explicit PrimExpr(::ferry::DataType dtype) {
    ::ferry::ObjectPtr<PrimExprNode> n = ::ferry::make_object<PrimExprNode>();
    n->dtype = std::move(dtype);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(PrimExpr, BaseExpr, PrimExprNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(PrimExprNode);
};
// clang-format on
// tschema: end

// tschema: IntImmNode
// clang-format off
/// Constant integer literals in the program.
class IntImmNode : public PrimExprNode {
 public:
  /// The internal value.
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

  static constexpr const char* _type_key = "IntImm";
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

// tschema: RelayExprNode
// clang-format off
/// Base node of all non-primitive expressions.
class RelayExprNode : public BaseExprNode {
 public:
  void VisitAttrs(::ferry::AttrVisitor*) {}
  bool SEqualReduce(const RelayExprNode*, ::ferry::SEqualReducer) const { return true; }
  void SHashReduce(::ferry::SHashReducer) const {}

  static constexpr const char* _type_key = "RelayExpr";
  static constexpr int32_t _type_child_slots = 1;
  FERRY_DECLARE_BASE_OBJECT_INFO(RelayExprNode, BaseExprNode);
};

/// Reference to RelayExprNode.
class RelayExpr : public BaseExpr {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(RelayExpr, BaseExpr, RelayExprNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(RelayExprNode);
};
// clang-format on
// tschema: end

// tschema: GlobalVarNode
// clang-format off
/// Global variable that lives in the top-level module.
class GlobalVarNode : public RelayExprNode {
 public:
  /// The name of the variable, this only acts as a hint.
  ::ferry::String name_hint;

  void VisitAttrs(::ferry::AttrVisitor* v) {
    v->Visit("name_hint", &name_hint);
  }

  static constexpr const char* _type_key = "GlobalVar";
  FERRY_DECLARE_FINAL_OBJECT_INFO(GlobalVarNode, RelayExprNode);
  // tschema: custom-begin
  bool SEqualReduce(const GlobalVarNode* other, ::ferry::SEqualReducer equal) const {
    return equal(name_hint, other->name_hint) && equal.FreeVarEqualImpl(this, other);
  }
  void SHashReduce(::ferry::SHashReducer hash_reduce) const {
    hash_reduce(name_hint);
    hash_reduce.FreeVarHashImpl(this);
  }
  // tschema: custom-end
};

/// Reference to GlobalVarNode.
class GlobalVar : public RelayExpr {
 public:
  /// Makes a new node from its fields, inherited ones first.
  explicit GlobalVar(::ferry::String name_hint) {
    ::ferry::ObjectPtr<GlobalVarNode> n = ::ferry::make_object<GlobalVarNode>();
    n->name_hint = std::move(name_hint);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(GlobalVar, RelayExpr, GlobalVarNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(GlobalVarNode);
};
// clang-format on
// tschema: end

}  // namespace seed

#endif  // SEED_EXPR_H_
