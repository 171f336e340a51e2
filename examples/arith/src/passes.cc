// The passes of the arith example, written by hand against the generated nodes and registered
// as global functions, so Python (or any other Ferry client) can call them:
//
//   arith.Simplify(expr)             constant folding and algebraic identities (a
//                                    StructuralTransform)
//   arith.Substitute(expr, {var: e}) replaces free variables
//   arith.FreeVars(expr)             the free variables, in order of first appearance
//   arith.Evaluate(expr, {var: v})   the value of an expression (int or float)
//   arith.PostOrderVisit(expr, f)    calls f(node) on every sub-expression, children first
//   arith.Transform(expr, f)         rebuilds bottom-up; f(node) may return a replacement
//   arith.ToText(expr)               infix text: "(x + 2) * y"
#include <algorithm>  // std::min, std::max
#include <cmath>      // std::floor
#include <sstream>    // ToText
#include <string>
#include <unordered_set>  // FreeVars
#include <utility>
#include <vector>

#include "arith/nodes.h"

namespace arith {
namespace {

using ferry::Any;
using ferry::Array;
using ferry::DataType;
using ferry::Downcast;
using ferry::Function;
using ferry::Map;
using ferry::Object;
using ferry::ObjectRef;

const DataType kInt64("int64");
const DataType kFloat64("float64");
const DataType kBool("bool");

bool IsFloat(const PrimExpr& e) { return e->dtype.is_float(); }

/// A node of the same binary type as `op`, with new operands.
PrimExpr RebuildBinary(const BinaryOpNode* op, PrimExpr a, PrimExpr b) {
  if (a.same_as(op->a) && b.same_as(op->b)) return ferry::GetRef<PrimExpr>(op);
  DataType dtype = op->dtype;
  if (op->IsInstance<AddNode>()) return Add(dtype, a, b);
  if (op->IsInstance<SubNode>()) return Sub(dtype, a, b);
  if (op->IsInstance<MulNode>()) return Mul(dtype, a, b);
  if (op->IsInstance<FloorDivNode>()) return FloorDiv(dtype, a, b);
  if (op->IsInstance<MinNode>()) return Min(dtype, a, b);
  if (op->IsInstance<MaxNode>()) return Max(dtype, a, b);
  if (op->IsInstance<EQNode>()) return EQ(dtype, a, b);
  if (op->IsInstance<LTNode>()) return LT(dtype, a, b);
  FERRY_THROW(TypeError) << "unknown binary operator " << op->GetTypeKey();
}

/// Rebuilds `e` bottom-up: `post` maps every node after its children were rebuilt.
template <typename F>
PrimExpr Rewrite(const PrimExpr& e, const F& post) {
  // Children are rewritten in order, left to right, one statement each (the order of function
  // arguments is unspecified in C++, and visitors see it).
  if (const auto* op = e.as<BinaryOpNode>()) {
    PrimExpr a = Rewrite(op->a, post);
    PrimExpr b = Rewrite(op->b, post);
    return post(RebuildBinary(op, a, b));
  }
  if (const auto* op = e.as<SelectNode>()) {
    PrimExpr c = Rewrite(op->condition, post);
    PrimExpr t = Rewrite(op->true_value, post);
    PrimExpr f = Rewrite(op->false_value, post);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return post(e);
    }
    return post(Select(op->dtype, c, t, f));
  }
  if (const auto* op = e.as<LetNode>()) {
    PrimExpr value = Rewrite(op->value, post);
    PrimExpr body = Rewrite(op->body, post);
    if (value.same_as(op->value) && body.same_as(op->body)) return post(e);
    return post(Let(op->dtype, op->var, value, body));
  }
  return post(e);
}

// ------------------------------------------------------------------------------------------
// Simplify

int64_t FloorDivInt(int64_t a, int64_t b) {
  if (b == 0) FERRY_THROW(ZeroDivisionError) << "floor division by zero";
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Folds one node whose children are already simplified.
PrimExpr FoldNode(const PrimExpr& e) {
  if (const auto* op = e.as<BinaryOpNode>()) {
    const auto* ia = op->a.as<IntImmNode>();
    const auto* ib = op->b.as<IntImmNode>();
    if (ia != nullptr && ib != nullptr) {
      int64_t x = ia->value, y = ib->value;
      if (op->IsInstance<AddNode>()) return IntImm(kInt64, x + y);
      if (op->IsInstance<SubNode>()) return IntImm(kInt64, x - y);
      if (op->IsInstance<MulNode>()) return IntImm(kInt64, x * y);
      if (op->IsInstance<FloorDivNode>()) return IntImm(kInt64, FloorDivInt(x, y));
      if (op->IsInstance<MinNode>()) return IntImm(kInt64, std::min(x, y));
      if (op->IsInstance<MaxNode>()) return IntImm(kInt64, std::max(x, y));
      if (op->IsInstance<EQNode>()) return IntImm(kBool, x == y);
      if (op->IsInstance<LTNode>()) return IntImm(kBool, x < y);
    }
    auto is_int = [](const IntImmNode* imm, int64_t v) {
      return imm != nullptr && imm->value == v;
    };
    if (op->IsInstance<AddNode>()) {
      if (is_int(ib, 0)) return op->a;  // x + 0
      if (is_int(ia, 0)) return op->b;  // 0 + x
    }
    if (op->IsInstance<SubNode>() && is_int(ib, 0)) return op->a;  // x - 0
    if (op->IsInstance<MulNode>()) {
      if (is_int(ib, 1)) return op->a;  // x * 1
      if (is_int(ia, 1)) return op->b;  // 1 * x
      if ((is_int(ib, 0) || is_int(ia, 0)) && !IsFloat(e)) return IntImm(kInt64, 0);
    }
    if (op->IsInstance<FloorDivNode>() && is_int(ib, 1)) return op->a;  // x // 1
    if (op->IsInstance<SubNode>() && op->a.same_as(op->b)) return IntImm(kInt64, 0);
    if ((op->IsInstance<MinNode>() || op->IsInstance<MaxNode>()) && op->a.same_as(op->b)) {
      return op->a;
    }
  }
  if (const auto* op = e.as<SelectNode>()) {
    if (const auto* c = op->condition.as<IntImmNode>()) {
      return c->value != 0 ? op->true_value : op->false_value;
    }
  }
  return e;
}

PrimExpr Substitute(const PrimExpr& e, const Map<Var, PrimExpr>& vmap);

PrimExpr Simplify(const PrimExpr& e) {
  // Constant folding is a bottom-up rewrite: StructuralTransform hands FoldNode every node with
  // its operands already folded, keeps what FoldNode returns unchanged (the same object), and
  // copies only the nodes above a change.
  PrimExpr folded = StructuralTransform(e, [](const ObjectRef& node) -> ObjectRef {
    if (const auto* expr = node.as<PrimExprNode>()) return FoldNode(ferry::GetRef<PrimExpr>(expr));
    return ObjectRef();
  });
  // let x = <constant> in body: substitute the constant and fold again.
  if (const auto* let = folded.as<LetNode>()) {
    if (let->value.as<IntImmNode>() != nullptr || let->value.as<FloatImmNode>() != nullptr) {
      Map<Var, PrimExpr> vmap;
      vmap.Set(let->var, let->value);
      return Simplify(Substitute(let->body, vmap));
    }
  }
  return folded;
}

// ------------------------------------------------------------------------------------------
// Substitute, FreeVars

PrimExpr Substitute(const PrimExpr& e, const Map<Var, PrimExpr>& vmap) {
  return Rewrite(e, [&](const PrimExpr& node) -> PrimExpr {
    if (const auto* v = node.as<VarNode>()) {
      if (auto replacement = vmap.Get(ferry::GetRef<Var>(v))) return *replacement;
    }
    return node;
  });
}

void CollectFreeVars(const PrimExpr& e, std::unordered_set<const Object*>* bound,
                     std::unordered_set<const Object*>* seen, Array<Var>* out) {
  if (const auto* v = e.as<VarNode>()) {
    if (!bound->count(v) && seen->insert(v).second) out->push_back(ferry::GetRef<Var>(v));
  } else if (const auto* op = e.as<BinaryOpNode>()) {
    CollectFreeVars(op->a, bound, seen, out);
    CollectFreeVars(op->b, bound, seen, out);
  } else if (const auto* op = e.as<SelectNode>()) {
    CollectFreeVars(op->condition, bound, seen, out);
    CollectFreeVars(op->true_value, bound, seen, out);
    CollectFreeVars(op->false_value, bound, seen, out);
  } else if (const auto* op = e.as<LetNode>()) {
    CollectFreeVars(op->value, bound, seen, out);
    bool inserted = bound->insert(op->var.get()).second;
    CollectFreeVars(op->body, bound, seen, out);
    if (inserted) bound->erase(op->var.get());
  }
}

Array<Var> FreeVars(const ObjectRef& node) {
  std::unordered_set<const Object*> bound, seen;
  Array<Var> out;
  if (const auto* fn = node.as<FunctionNode>()) {
    for (const Var& p : fn->params) bound.insert(p.get());
    CollectFreeVars(fn->body, &bound, &seen, &out);
  } else {
    CollectFreeVars(Downcast<PrimExpr>(node), &bound, &seen, &out);
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// Evaluate

/// A value: an int64 or a double.
struct Value {
  bool is_float;
  int64_t i;
  double f;
  double AsDouble() const { return is_float ? f : static_cast<double>(i); }
};

Value Eval(const PrimExpr& e, std::vector<std::pair<const Object*, Value>>* env) {
  if (const auto* op = e.as<IntImmNode>()) return {false, op->value, 0};
  if (const auto* op = e.as<FloatImmNode>()) return {true, 0, op->value};
  if (const auto* op = e.as<VarNode>()) {
    for (auto it = env->rbegin(); it != env->rend(); ++it) {
      if (it->first == op) return it->second;
    }
    FERRY_THROW(KeyError) << "Evaluate: no value for variable '" << op->name_hint << "'";
  }
  if (const auto* op = e.as<BinaryOpNode>()) {
    Value a = Eval(op->a, env), b = Eval(op->b, env);
    bool flt = a.is_float || b.is_float;
    double x = a.AsDouble(), y = b.AsDouble();
    if (op->IsInstance<EQNode>()) return {false, flt ? x == y : a.i == b.i, 0};
    if (op->IsInstance<LTNode>()) return {false, flt ? x < y : a.i < b.i, 0};
    if (flt) {
      if (op->IsInstance<AddNode>()) return {true, 0, x + y};
      if (op->IsInstance<SubNode>()) return {true, 0, x - y};
      if (op->IsInstance<MulNode>()) return {true, 0, x * y};
      if (op->IsInstance<FloorDivNode>()) {
        if (y == 0) FERRY_THROW(ZeroDivisionError) << "floor division by zero";
        return {true, 0, std::floor(x / y)};
      }
      if (op->IsInstance<MinNode>()) return {true, 0, std::min(x, y)};
      if (op->IsInstance<MaxNode>()) return {true, 0, std::max(x, y)};
    } else {
      if (op->IsInstance<AddNode>()) return {false, a.i + b.i, 0};
      if (op->IsInstance<SubNode>()) return {false, a.i - b.i, 0};
      if (op->IsInstance<MulNode>()) return {false, a.i * b.i, 0};
      if (op->IsInstance<FloorDivNode>()) return {false, FloorDivInt(a.i, b.i), 0};
      if (op->IsInstance<MinNode>()) return {false, std::min(a.i, b.i), 0};
      if (op->IsInstance<MaxNode>()) return {false, std::max(a.i, b.i), 0};
    }
  }
  if (const auto* op = e.as<SelectNode>()) {
    Value c = Eval(op->condition, env);
    return (c.is_float ? c.f != 0 : c.i != 0) ? Eval(op->true_value, env)
                                              : Eval(op->false_value, env);
  }
  if (const auto* op = e.as<LetNode>()) {
    env->emplace_back(op->var.get(), Eval(op->value, env));
    Value out = Eval(op->body, env);
    env->pop_back();
    return out;
  }
  FERRY_THROW(TypeError) << "Evaluate: cannot evaluate " << e->GetTypeKey();
}

Any Evaluate(const PrimExpr& e, const Map<Var, Any>& bindings) {
  std::vector<std::pair<const Object*, Value>> env;
  for (auto [var, value] : bindings) {
    if (auto i = value.as<int64_t>(); i && value.type_index() == kFerryInt) {
      env.emplace_back(var.get(), Value{false, *i, 0});
    } else if (auto f = value.as<double>()) {
      env.emplace_back(var.get(), Value{true, 0, *f});
    } else {
      FERRY_THROW(TypeError) << "Evaluate: the value of '" << var->name_hint
                             << "' must be an int or a float, not " << value.GetTypeKey();
    }
  }
  Value v = Eval(e, &env);
  return v.is_float ? Any(v.f) : Any(v.i);
}

// ------------------------------------------------------------------------------------------
// Visitors with callbacks, text

void PostOrderVisit(const PrimExpr& e, const Function& f) {
  Rewrite(e, [&](const PrimExpr& node) {
    f(node);
    return node;
  });
}

PrimExpr Transform(const PrimExpr& e, const Function& f) {
  return Rewrite(e, [&](const PrimExpr& node) -> PrimExpr {
    Any replacement = f(node);
    if (replacement.type_index() == kFerryNone) return node;
    return replacement.cast<PrimExpr>();
  });
}

const char* InfixOf(const BinaryOpNode* op) {
  if (op->IsInstance<AddNode>()) return " + ";
  if (op->IsInstance<SubNode>()) return " - ";
  if (op->IsInstance<MulNode>()) return " * ";
  if (op->IsInstance<FloorDivNode>()) return " // ";
  if (op->IsInstance<EQNode>()) return " == ";
  if (op->IsInstance<LTNode>()) return " < ";
  return nullptr;  // min, max print as calls
}

void Print(const PrimExpr& e, std::ostream& os) {
  if (const auto* op = e.as<IntImmNode>()) {
    os << (op->dtype.is_bool() ? (op->value ? "True" : "False") : std::to_string(op->value));
  } else if (const auto* op = e.as<FloatImmNode>()) {
    os << op->value;
  } else if (const auto* op = e.as<VarNode>()) {
    os << op->name_hint;
  } else if (const auto* op = e.as<BinaryOpNode>()) {
    if (const char* infix = InfixOf(op)) {
      os << "(";
      Print(op->a, os);
      os << infix;
      Print(op->b, os);
      os << ")";
    } else {
      os << (op->IsInstance<MinNode>() ? "min(" : "max(");
      Print(op->a, os);
      os << ", ";
      Print(op->b, os);
      os << ")";
    }
  } else if (const auto* op = e.as<SelectNode>()) {
    os << "select(";
    Print(op->condition, os);
    os << ", ";
    Print(op->true_value, os);
    os << ", ";
    Print(op->false_value, os);
    os << ")";
  } else if (const auto* op = e.as<LetNode>()) {
    os << "(let " << op->var->name_hint << " = ";
    Print(op->value, os);
    os << " in ";
    Print(op->body, os);
    os << ")";
  } else {
    os << e->GetTypeKey();
  }
}

std::string ToText(const ObjectRef& node) {
  std::ostringstream os;
  if (const auto* fn = node.as<FunctionNode>()) {
    os << "fn(";
    for (size_t i = 0; i < fn->params.size(); ++i) {
      os << (i ? ", " : "") << fn->params[static_cast<int64_t>(i)]->name_hint;
    }
    os << ") => ";
    Print(fn->body, os);
  } else {
    Print(Downcast<PrimExpr>(node), os);
  }
  return os.str();
}

FERRY_REGISTER_GLOBAL("arith.Simplify").set_body_typed(Simplify, {"expr"});
FERRY_REGISTER_GLOBAL("arith.Substitute").set_body_typed(Substitute, {"expr", "vmap"});
FERRY_REGISTER_GLOBAL("arith.FreeVars").set_body_typed(FreeVars, {"node"});
FERRY_REGISTER_GLOBAL("arith.Evaluate").set_body_typed(Evaluate, {"expr", "bindings"});
FERRY_REGISTER_GLOBAL("arith.PostOrderVisit").set_body_typed(PostOrderVisit, {"expr", "f"});
FERRY_REGISTER_GLOBAL("arith.Transform").set_body_typed(Transform, {"expr", "f"});
FERRY_REGISTER_GLOBAL("arith.ToText").set_body_typed(ToText, {"node"});

}  // namespace
}  // namespace arith
