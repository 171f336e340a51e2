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
/// Semantics: plain values, strings and bytes compare by value; arrays elementwise; maps by key
/// (order does not matter); Shapes by value; registered nodes through SEqualReduce (or all
/// fields, see reflection.h); everything else by identity. Within one comparison an object is
/// matched to at most one object of the other side, so sharing must agree, and a shared
/// sub-graph is compared and hashed once. Both walk a node's children as its reducer meets them,
/// by recursion to a bounded depth and on explicit stacks below it: depth is limited by memory
/// only. `StructuralEqual()(a, b)` implies `StructuralHash()(a) == StructuralHash()(b)`.
#ifndef FERRY_REFLECTION_STRUCTURAL_H_
#define FERRY_REFLECTION_STRUCTURAL_H_

#include <cstdint>      // uint64_t
#include <cstring>      // memcmp of strings
#include <optional>     // StructuralMismatch
#include <string>       // mismatch paths
#include <type_traits>  // is_base_of

#include "ferry/any.h"
#include "ferry/container/array.h"
#include "ferry/container/optional.h"
#include "ferry/dtype.h"
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
/// An Array field: the reducers hand its elements to the walk at once (ReduceArray,
/// ReduceArrays) instead of queueing the array as an object to be entered later.
template <typename T>
struct IsArrayRef : std::false_type {};
template <typename E>
struct IsArrayRef<Array<E>> : std::true_type {};
/// An Optional of an object reference (not of a String): walked as the reference or null.
template <typename T>
struct IsOptionalRef : std::false_type {};
template <typename E>
struct IsOptionalRef<Optional<E>>
    : std::bool_constant<std::is_base_of_v<ObjectRef, E> && !std::is_base_of_v<String, E>> {};
/// Fields whose AnyView is an int (kFerryInt): compared and hashed inline by the reducers.
/// Enums are their integer value (see enum.h).
template <typename T>
constexpr bool kIsIntField = std::is_enum_v<T> ||
                             (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                              (std::is_signed_v<T> || sizeof(T) < sizeof(int64_t)));
/// Fields compared inline with `==` (the generic path agrees when `==` holds; when it does
/// not, the reducer takes the generic path, which also sees NaNs and records mismatch paths).
template <typename T>
constexpr bool kIsPlainField =
    kIsIntField<T> || std::is_same_v<T, bool> || std::is_same_v<T, double> ||
    std::is_same_v<T, float> || std::is_same_v<T, DataType>;

/// The mixing steps of the structural hash (structural.cc uses the same).
inline uint64_t SHashCombine(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}
inline uint64_t SHashMix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}
/// What a null reference (None) mixes into the hash of its node (AnyHash of None).
constexpr uint64_t kSHashNone = 0;
/// The hash of an int cell in a structural hash.
inline uint64_t SHashInt(int64_t value) {
  return SHashMix(static_cast<uint64_t>(value) ^ (uint64_t{kFerryInt} << 56));
}
/// The state of one node's SHashReduce, which SHashReducer points at; its inline paths update
/// it. Each node has its own (the walk keeps them on its stack), so a reducer that meets a
/// child node may have the child hashed at once and go on with its own state.
struct SHashState {
  /// The node's own part of its hash so far: its type and plain fields.
  uint64_t acc = 0;
  /// The fold of its children's hashes so far, when they are hashed at once (`recursing`).
  uint64_t kids = 0;
  SHashHandler* handler = nullptr;
  /// The hash of an empty array (a child, folded into `kids`).
  uint64_t empty_array_hash = 0;
  int32_t depth = 0;
  /// At a definition site (FreeVarHashImpl numbers the variables).
  bool define = false;
  /// Children are hashed as the reducer meets them; else they wait for the walk.
  bool recursing = false;
};
/// The bytes of an inline string (kFerrySmallStr) as a word, zero past its length (a cell
/// made through the C ABI may carry other bytes there).
inline uint64_t InlineTextWord(const FerryAny& cell) {
  return static_cast<uint64_t>(cell.v_int64) & ((uint64_t{1} << (8 * (cell.small_len & 7))) - 1);
}
/// Two strings hold the same text (two inline ones compare as two words).
inline bool SameText(const String& a, const String& b) {
  if (a.is_inline() && b.is_inline()) {
    return a.cell().small_len == b.cell().small_len &&
           InlineTextWord(a.cell()) == InlineTextWord(b.cell());
  }
  const size_t n = a.size();
  return n == b.size() && std::memcmp(a.data(), b.data(), n) == 0;
}
/// How SHashReducer mixes a plain field into its node's hash inline: rotate, xor, multiply
/// (FxHash's step; the node's hash is mixed again where its parent combines it). Fields are
/// hashed by value as equality compares them: -0.0 as 0.0, a NaN by its bits, a string by its
/// text (the same for its inline and its object form). A field of a given type is always
/// hashed this way, so equal values hash alike; values in cells (Any fields, array elements)
/// take the walk's generic path, which gives other numbers.
inline uint64_t SHashStep(uint64_t acc, uint64_t value) {
  return (((acc << 5) | (acc >> 59)) ^ value) * 0x517cc1b727220a95ULL;
}
inline uint64_t SHashFloatBits(double value) {
  const double d = value == 0.0 ? 0.0 : value;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}
/// A DataType's code, bits and lanes as one word (they are 4 bytes: one load).
inline uint64_t SHashDataTypeBits(const DataType& dtype) {
  static_assert(sizeof(FerryDataType) == sizeof(uint32_t));
  const FerryDataType data = dtype;
  uint32_t word;
  std::memcpy(&word, &data, sizeof(word));
  return word;
}
/// Mixes a string's text into `acc`: up to 7 bytes as one word with the length in its top
/// byte, longer ones as their length and then 8 bytes at a time.
inline uint64_t SHashText(uint64_t acc, const String& s) {
  if (s.is_inline()) {
    return SHashStep(acc, InlineTextWord(s.cell()) | (uint64_t{s.cell().small_len} << 56));
  }
  const char* p = s.data();
  size_t n = s.size();
  if (n < 8) return SHashStep(acc, LoadShortBytes(p, n) | (uint64_t{n} << 56));
  acc = SHashStep(acc, n);
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    acc = SHashStep(acc, word);
  }
  return SHashStep(acc, LoadShortBytes(p, n));
}
}  // namespace details

/// Handed to SEqualReduce; compares the fields of two nodes.
class SEqualReducer {
 public:
  /// Compares two field values: plain values at once, objects when the walk reaches them.
  /// Equal plain values and strings return at once without a call; arrays hand their
  /// elements to the walk (ReduceArrays); a difference takes the generic path (Reduce), which
  /// records where it is.
  template <typename T>
  bool operator()(const T& lhs, const T& rhs) const {
    if constexpr (std::is_same_v<T, DataType>) {
      if (FERRY_LIKELY(details::SHashDataTypeBits(lhs) == details::SHashDataTypeBits(rhs))) {
        return true;
      }
      return Reduce(AnyView(lhs), AnyView(rhs), &lhs, false);
    } else if constexpr (details::kIsPlainField<T>) {
      if (FERRY_LIKELY(lhs == rhs)) return true;
      return Reduce(AnyView(lhs), AnyView(rhs), &lhs, false);
    } else if constexpr (std::is_same_v<T, String>) {
      if (FERRY_LIKELY(details::SameText(lhs, rhs))) return true;
      return Reduce(AnyView(lhs), AnyView(rhs), &lhs, false);
    } else if constexpr (details::IsArrayRef<T>::value) {
      const auto* l = static_cast<const ArrayObj*>(lhs.get());
      const auto* r = static_cast<const ArrayObj*>(rhs.get());
      if (l != nullptr && r != nullptr && l->size() == 0 && r->size() == 0) return true;
      return ReduceArrays(l, r, &lhs, false);
    } else if constexpr (details::kIsWalkedRef<T> || details::IsOptionalRef<T>::value) {
      if (lhs.get() == nullptr && rhs.get() == nullptr) return true;
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
  /// Reduce for two Array fields (ArrayObj or null): the elements go to the walk at once, as
  /// the walk would queue them on reaching the arrays; shared arrays take ReduceObjects.
  FERRY_DLL bool ReduceArrays(const Object* lhs, const Object* rhs, const void* lhs_addr,
                              bool define) const;
  details::SEqualHandler* handler_;
  friend class details::SEqualHandler;
};

/// Handed to SHashReduce; hashes the fields of a node.
class SHashReducer {
 public:
  /// Plain values (ints, enums, floats, bools, DataType) and strings are hashed inline, by
  /// value; arrays hand their elements to the walk (ReduceArray); objects are queued.
  template <typename T>
  void operator()(const T& value) const {
    if constexpr (details::kIsIntField<T> || std::is_same_v<T, bool>) {
      Mix(static_cast<uint64_t>(static_cast<int64_t>(value)));
    } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      Mix(details::SHashFloatBits(value));
    } else if constexpr (std::is_same_v<T, DataType>) {
      Mix(details::SHashDataTypeBits(value));
    } else if constexpr (std::is_same_v<T, String>) {
      state_->acc = details::SHashText(state_->acc, value);
    } else if constexpr (details::IsArrayRef<T>::value) {
      const auto* array = static_cast<const ArrayObj*>(value.get());
      if (array != nullptr && state_->recursing && array->size() == 0) {
        state_->kids = details::SHashCombine(state_->kids, state_->empty_array_hash);
      } else {
        ReduceArray(value.get(), &value, false);
      }
    } else if constexpr (details::kIsWalkedRef<T> || details::IsOptionalRef<T>::value) {
      if (value.get() == nullptr) {
        Mix(details::kSHashNone);
      } else {
        ReduceObject(value.get(), &value, false);
      }
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
  explicit SHashReducer(details::SHashState* state) : state_(state) {}
  void Mix(uint64_t value) const { state_->acc = details::SHashStep(state_->acc, value); }
  FERRY_DLL void Reduce(const AnyView& value, bool define) const;
  /// As above; `addr` is where the value lives: a member of the node needs no extra reference
  /// to stay alive until the walk reaches it, a temporary does.
  FERRY_DLL void Reduce(const AnyView& value, const void* addr, bool define) const;
  /// Reduce for an object reference (maybe null), without reading the object.
  FERRY_DLL void ReduceObject(const Object* value, const void* addr, bool define) const;
  /// Reduce for an Array field (ArrayObj or null): its elements go to the walk at once, with
  /// the hash the array gives when walked as an object; shared arrays take ReduceObject.
  FERRY_DLL void ReduceArray(const Object* value, const void* addr, bool define) const;
  /// The running node's state in the walk.
  details::SHashState* state_;
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
