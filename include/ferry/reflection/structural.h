/// \file ferry/reflection/structural.h
/// Structural equality and hashing of values, as in TVM.
///
/// A node opts in with two methods; `equal(x, y)` and `hash(x)` take its fields:
///
///     bool SEqualReduce(const LetNode* other, SEqualReducer equal) const {
///       return equal.DefEqual(var, other->var) && equal(value, other->value) &&
///              equal(body, other->body);
///     }
///     void SHashReduce(SHashReducer hash) const {
///       hash.DefHash(var);
///       hash(value);
///       hash(body);
///     }
///
/// `DefEqual` / `DefHash` mark a definition site: the variables there are mapped to each other,
/// so `let x = 1 in x` equals `let y = 1 in y`. A variable node compares with
/// `equal.FreeVarEqualImpl(this, other)` and hashes with `hash.FreeVarHashImpl(this)`.
///
/// Semantics: plain values and strings compare by value; arrays elementwise; maps by key
/// (order does not matter); Shapes by value; registered nodes through SEqualReduce (or all
/// fields, see reflection.h); everything else by identity. Within one comparison an object is
/// matched to at most one object of the other side, so sharing must agree, and a shared
/// sub-graph is compared and hashed once. Both walk the graph with an explicit stack: depth is
/// limited by memory only. `StructuralEqual()(a, b)` implies
/// `StructuralHash()(a) == StructuralHash()(b)`.
#ifndef FERRY_REFLECTION_STRUCTURAL_H_
#define FERRY_REFLECTION_STRUCTURAL_H_

#include <cstdint>      // uint64_t
#include <optional>     // StructuralMismatch
#include <string>       // mismatch paths
#include <type_traits>  // is_base_of

#include "ferry/any.h"
#include "ferry/string.h"

namespace ferry {

namespace details {
class SEqualHandler;
class SHashHandler;
/// A field the reducers hand to the walk as an object pointer, without reading the object: an
/// object reference other than String (a String compares by content). The walk reads the
/// object's header when it reaches it, so a node's children are not touched twice (on a large
/// graph, a cache miss each).
template <typename T>
constexpr bool kIsWalkedRef = std::is_base_of_v<ObjectRef, T> && !std::is_base_of_v<String, T>;
}  // namespace details

/// Handed to SEqualReduce; compares the fields of two nodes.
class SEqualReducer {
 public:
  /// Compares two field values: plain values at once, objects when the walk reaches them.
  template <typename T>
  bool operator()(const T& lhs, const T& rhs) const {
    if constexpr (details::kIsWalkedRef<T>) {
      return ReduceObjects(lhs.get(), rhs.get(), &lhs, false);
    } else {
      return Reduce(AnyView(lhs), AnyView(rhs), &lhs, false);
    }
  }
  /// Compares two definition sites, mapping the free variables in them to each other.
  template <typename T>
  bool DefEqual(const T& lhs, const T& rhs) const {
    if constexpr (details::kIsWalkedRef<T>) {
      return ReduceObjects(lhs.get(), rhs.get(), &lhs, true);
    } else {
      return Reduce(AnyView(lhs), AnyView(rhs), &lhs, true);
    }
  }
  /// For variable nodes: true when the two variables may be mapped to each other here (at a
  /// definition site, or anywhere with map_free_vars); the mapping is then kept.
  FERRY_DLL bool FreeVarEqualImpl(const Object* lhs, const Object* rhs) const;
  FERRY_DLL bool map_free_vars() const;

 private:
  explicit SEqualReducer(details::SEqualHandler* handler) : handler_(handler) {}
  FERRY_DLL bool Reduce(const AnyView& lhs, const AnyView& rhs, const void* lhs_addr,
                        bool define) const;
  /// Reduce for two object references (either may be null), without reading the objects.
  FERRY_DLL bool ReduceObjects(const Object* lhs, const Object* rhs, const void* lhs_addr,
                               bool define) const;
  details::SEqualHandler* handler_;
  friend class details::SEqualHandler;
};

/// Handed to SHashReduce; hashes the fields of a node.
class SHashReducer {
 public:
  template <typename T>
  void operator()(const T& value) const {
    if constexpr (details::kIsWalkedRef<T>) {
      ReduceObject(value.get(), &value, false);
    } else {
      Reduce(AnyView(value), &value, false);
    }
  }
  /// Hashes a definition site: its variables hash by the order they are defined in.
  template <typename T>
  void DefHash(const T& value) const {
    if constexpr (details::kIsWalkedRef<T>) {
      ReduceObject(value.get(), &value, true);
    } else {
      Reduce(AnyView(value), &value, true);
    }
  }
  /// For variable nodes: by definition order at a definition site (or with map_free_vars),
  /// else by identity.
  FERRY_DLL void FreeVarHashImpl(const Object* var) const;
  /// Mixes an already computed hash into the node's hash.
  FERRY_DLL void SHashReduceHashedValue(uint64_t hash) const;
  FERRY_DLL bool map_free_vars() const;

 private:
  explicit SHashReducer(details::SHashHandler* handler) : handler_(handler) {}
  FERRY_DLL void Reduce(const AnyView& value, bool define) const;
  /// As above; `addr` is where the value lives: a member of the node needs no extra reference
  /// to stay alive until the walk reaches it, a temporary does.
  FERRY_DLL void Reduce(const AnyView& value, const void* addr, bool define) const;
  /// Reduce for an object reference (maybe null), without reading the object.
  FERRY_DLL void ReduceObject(const Object* value, const void* addr, bool define) const;
  details::SHashHandler* handler_;
  friend class details::SHashHandler;
};

/// Structural equality; `map_free_vars` lets free variables on both sides map to each other.
class StructuralEqual {
 public:
  FERRY_DLL bool operator()(const AnyView& lhs, const AnyView& rhs,
                            bool map_free_vars = false) const;
};

/// A structural hash that agrees with StructuralEqual. Objects compared by identity (free
/// variables without map_free_vars, unregistered objects) hash by address, so such hashes
/// differ between runs.
class StructuralHash {
 public:
  FERRY_DLL uint64_t operator()(const AnyView& value, bool map_free_vars = false) const;
};

/// The path to the first difference, such as `root.body.b.value` or `root.args[2]`, or nullopt
/// when the values are structurally equal.
FERRY_DLL std::optional<std::string> StructuralMismatch(const AnyView& lhs, const AnyView& rhs,
                                                        bool map_free_vars = false);

}  // namespace ferry

#endif  // FERRY_REFLECTION_STRUCTURAL_H_
