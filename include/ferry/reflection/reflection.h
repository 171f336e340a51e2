/// \file ferry/reflection/reflection.h
/// Reflection: a node lists its fields in `VisitAttrs`, and `FERRY_REGISTER_NODE_TYPE` records
/// them once (name, type, byte offset), so reading a field by name is a table lookup.
///
///     class AddNode : public ExprNode {
///      public:
///       Expr a, b;
///       void VisitAttrs(AttrVisitor* v) {
///         v->Visit("a", &a);
///         v->Visit("b", &b);
///       }
///       ...
///     };
///     FERRY_REGISTER_NODE_TYPE(AddNode);
///
///     Any a = GetAttr(add, "a");                                  // AttributeError if absent
///     ObjectRef n = MakeNode("test.Add", {{"a", x}, {"b", y}});   // checks names and types
///
/// A node may also define `bool SEqualReduce(const AddNode* other, SEqualReducer equal) const`
/// and `void SHashReduce(SHashReducer hash) const` (see structural.h); the registration finds
/// them. A node without them compares by identity unless it sets
/// `static constexpr bool _type_sequal_by_fields = true`, which compares all visited fields.
///
/// Fields are read-only through reflection unless the node declares
/// `static constexpr bool _type_mutable = true;` (inherited by subclasses): then `SetAttr`, the
/// C ABI's FerryObjectSetAttr and Python attribute assignment write them in place. Such a write
/// is seen by every holder of the object (there is no copy-on-write on this path). Writes of one
/// field from many threads are safe with each other (the last one wins; an object field is
/// swapped in with one atomic exchange, other fields under a lock, and the old value released
/// after), but a read of a field while another thread writes it is a data race, as reading a
/// `std::shared_ptr` while another thread assigns it is: synchronize readers with writers.
#ifndef FERRY_REFLECTION_REFLECTION_H_
#define FERRY_REFLECTION_REFLECTION_H_

#include <new>          // placement new in construct_at
#include <string>       // field names
#include <type_traits>  // detection of optional members
#include <utility>      // swap in StoreField
#include <vector>       // field tables

#include "ferry/any.h"
#include "ferry/container/array.h"
#include "ferry/container/map.h"
#include "ferry/container/optional.h"
#include "ferry/error.h"
#include "ferry/reflection/structural.h"

namespace ferry {

class SEqualReducer;
class SHashReducer;

/// How a field of C++ type T is read and written as a value; one static instance per type.
struct FieldType {
  /// The type as error messages name it ("int", "Array[test.Expr]").
  std::string (*type_str)();
  /// Reads the field at `addr` as an owned value.
  Any (*get)(const void* addr);
  /// Writes `value` to the field at `addr`, converting it; a TypeError (with the reason) when
  /// it does not convert. The field is unchanged then.
  void (*set)(void* addr, const AnyView& value);
  /// `get` for the C ABI (FerryObjectGetFieldGetter): writes an owned value, returns 0/-1.
  FerryFieldGetter get_c;
  /// Reads the field at `addr` as a borrowed cell (no reference taken), valid while the field
  /// is: the structural walks and SaveJSON read every field of every node this way. False
  /// when the type has no borrowed form; use `get` then. For a field that is one object
  /// pointer it is details::ViewObjectPointerField, by which StructuralVisit and
  /// StructuralTransform know they may read the pointer at `addr` without the call.
  bool (*view)(const void* addr, FerryAny* out);
  /// A write to a live object that other threads may write too (SetAttr, FerryObjectSetAttr,
  /// FerryObjectGetFieldSetter for Python): as `set`, but the new value goes in atomically with
  /// respect to other such writes of the field (StoreField). Returns 0, or -1 with the error
  /// raised. `set` stays a plain assignment for objects no other thread sees yet (MakeNode,
  /// LoadJSON).
  FerryFieldSetter set_c;
};

namespace details {
/// FieldType::view. Only for the types whose borrowed form is exact and cheap: object
/// references (the cell points at the object), Any, String (its own cell), and plain numbers.
/// Others (std::string, whose view would be a C string cut at an embedded NUL; Optional of a value)
/// return false.
template <typename T>
bool ViewField(const void* addr, FerryAny* out) {
  const T& field = *static_cast<const T*>(addr);
  if constexpr (std::is_same_v<T, Any>) {
    *out = *field.raw();
  } else if constexpr (std::is_same_v<T, String>) {
    *out = field.cell();
  } else if constexpr (std::is_base_of_v<ObjectRef, T> || std::is_arithmetic_v<T>) {
    TypeTraitsOf<T>::CopyToAnyView(field, out);
  } else {
    return false;
  }
  return true;
}

/// Whether a field of type T is exactly one object pointer, null or not, whose borrowed cell is
/// that object's (None when null): object references (Array, Map, List, Dict, Tuple, Tensor and
/// user reference classes among them; their views all borrow the object as ObjectRef's does)
/// and Optional of one.
template <typename T, typename = void>
struct IsObjectPointerField
    : std::bool_constant<std::is_base_of_v<ObjectRef, T> && sizeof(T) == sizeof(ObjectRef)> {};
template <typename T>
struct IsObjectPointerField<Optional<T>, std::enable_if_t<std::is_base_of_v<ObjectRef, T>>>
    : std::bool_constant<sizeof(Optional<T>) == sizeof(ObjectRef)> {};

/// FieldType::view of every field type with IsObjectPointerField: one function for all of them,
/// in libferry, so that its address tells a walk that the field is an object pointer.
FERRY_DLL bool ViewObjectPointerField(const void* addr, FerryAny* out);

/// Runs `body` for the C ABI: 0, or -1 with the exception it threw as this thread's raised
/// error.
template <typename F>
int StatusOf(F&& body) {
  try {
    body();
    return 0;
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    SetRaisedFromCurrentException();
    return -1;
  }
}

/// The lock that serializes StoreField's writes to the field at `addr`, for field types that
/// one atomic instruction cannot write: one of a fixed table of spin locks, chosen by address.
/// Held only around a swap of two values, never while a value is released.
FERRY_DLL void LockFieldWrite(const void* addr) noexcept;
FERRY_DLL void UnlockFieldWrite(const void* addr) noexcept;

/// Replaces `*field` with `value` so that concurrent StoreFields of one field never tear it,
/// lose a reference or release one twice: numbers by an atomic store, object references by an
/// atomic exchange, other types (Any, String, Optional, ...) by a swap under LockFieldWrite.
/// The old value is released on return, outside any lock (its destructor may run anything).
template <typename T>
void StoreField(T* field, T value) {
  if constexpr (std::is_arithmetic_v<T>) {
    __atomic_store(field, &value, __ATOMIC_RELAXED);
  } else if constexpr (std::is_base_of_v<ObjectRef, T> && sizeof(T) == sizeof(ObjectRef)) {
    ObjectUnsafe::ExchangeRef(field, &value);
  } else {
    struct Guard {
      const void* addr;
      ~Guard() { UnlockFieldWrite(addr); }
    };
    LockFieldWrite(field);
    Guard guard{field};
    using std::swap;
    swap(*field, value);
  }
}

/// Hidden: one table per library, so the local static is not an STB_GNU_UNIQUE symbol (glibc
/// never unmaps a library that has one, which would defeat UnloadLibrary).
template <typename T>
__attribute__((visibility("hidden"))) const FieldType* FieldTypeOf() {
  static_assert(TypeTraitsOf<T>::kEnabled,
                "VisitAttrs: a field type has no TypeTraits, so it cannot be reflected");
  static const FieldType type{
      &TypeTraitsOf<T>::TypeStr,
      [](const void* addr) { return Any(*static_cast<const T*>(addr)); },
      [](void* addr, const AnyView& value) { *static_cast<T*>(addr) = value.cast<T>(); },
      [](const void* addr, FerryAny* out) {
        return StatusOf([&] { *out = Any(*static_cast<const T*>(addr)).MoveToOwned(); });
      },
      IsObjectPointerField<T>::value ? &ViewObjectPointerField : &ViewField<T>,
      [](void* addr, const FerryAny* value) {
        return StatusOf([&] {
          StoreField(static_cast<T*>(addr), reinterpret_cast<const AnyView*>(value)->cast<T>());
        });
      }};
  return &type;
}
}  // namespace details

/// Visits the fields of a node. `Visit` works for every field type with TypeTraits (bool,
/// integers, double, String, std::string, DataType, object references, Array, Map, Optional,
/// Variant, Shape, Any); visitors implement `VisitField`.
class AttrVisitor {
 public:
  virtual ~AttrVisitor() = default;
  template <typename T>
  void Visit(const char* name, T* value) {
    VisitField(name, value, details::FieldTypeOf<T>());
  }
  virtual void VisitField(const char* name, void* addr, const FieldType* type) = 0;
};

namespace details {
/// What a value must be to go into a field of a type registered at run time (py_class): a type
/// key, `Optional[...]`, element types of containers; checked before FieldType::set. Opaque;
/// made by FerryTypeRegisterWithFields from the field's type text.
struct FieldConstraint;
/// Throws the TypeError naming expected and given type when `value` does not meet `constraint`.
FERRY_DLL void CheckFieldConstraint(const FieldConstraint* constraint, const AnyView& value);
/// The constraint as type text: "Optional[demo.Point]".
FERRY_DLL const std::string& FieldConstraintStr(const FieldConstraint* constraint);
/// Checks `value` against `constraint` and writes it to the field at `addr` through `type`,
/// normalizing where the constraint says how (an enum's value becomes its member's name).
FERRY_DLL void WriteConstrainedField(const FieldConstraint* constraint, const FieldType* type,
                                     void* addr, const AnyView& value);
/// After a write of the field at `addr`: gives the List or Dict it now stores (a new one when a
/// Python list or an Array was converted on the way in) the item type `constraint` says, so
/// that later writes into it are checked.
FERRY_DLL void AdoptStoredItemTypes(const FieldConstraint* constraint, const FieldType* type,
                                    const void* addr);
}  // namespace details

/// One field of a registered node.
struct FieldInfo {
  std::string name;
  /// Byte offset from the start of the object.
  size_t offset;
  const FieldType* type;
  /// A stricter check than `type` makes, for fields of types registered at run time; null for
  /// C++ fields (their C++ type is the check).
  const details::FieldConstraint* constraint = nullptr;
  /// Whether structural equality and hashing visit the field (py_class `compare=False`).
  bool compare = true;
  /// Whether Repr prints the field (py_class `repr=False`).
  bool repr = true;

  /// The field's type as error messages and NodeFields name it.
  std::string TypeStr() const {
    return constraint != nullptr ? details::FieldConstraintStr(constraint) : type->type_str();
  }
  /// Writes the field of `obj` from `value`, converting and checking it; a TypeError (with the
  /// reason, not the field name) leaves the field unchanged.
  void Write(Object* obj, const AnyView& value) const {
    void* addr = reinterpret_cast<char*>(obj) + offset;
    if (constraint != nullptr) {
      details::WriteConstrainedField(constraint, type, addr, value);
    } else {
      type->set(addr, value);
    }
  }
};

namespace details {
struct DynamicLayout;
}  // namespace details

/// What the runtime knows about a registered node type.
struct NodeInfo {
  int32_t type_index = -1;
  std::string type_key;
  /// std::hash of `type_key`, set at registration (structural hashing mixes it in per node).
  uint64_t type_key_hash = 0;
  /// sizeof the registered C++ class, or 0 if unknown: an address in [obj, obj + object_size)
  /// is a member of the node (so it lives as long as the node), not a temporary.
  size_t object_size = 0;
  /// Runs the node's VisitAttrs on `obj`.
  void (*visit_attrs)(Object* obj, AttrVisitor* visitor) = nullptr;
  /// Makes a default-constructed node of this type (`info` is this record); null when the node
  /// has no default constructor.
  ObjectPtr<Object> (*create)(const NodeInfo& info) = nullptr;
  /// Constructs a default node of the registered C++ class in `mem` (object_size bytes aligned
  /// to object_align; the header is set by the caller) and destroys one in place: what a type
  /// registered at run time uses to extend this class. Null without a default constructor.
  void (*construct_at)(void* mem) = nullptr;
  void (*destroy_at)(Object* obj) = nullptr;
  size_t object_align = alignof(Object);
  /// Set for types registered at run time (FerryTypeRegisterWithFields): their field storage.
  const details::DynamicLayout* dynamic = nullptr;
  /// The node's SEqualReduce / SHashReduce, or null (compare all fields if `sequal_by_fields`,
  /// else by identity).
  bool (*sequal_reduce)(const Object* lhs, const Object* rhs, SEqualReducer equal) = nullptr;
  void (*shash_reduce)(const Object* obj, SHashReducer hash) = nullptr;
  bool sequal_by_fields = false;
  /// Whether reflection may write the fields (`_type_mutable`): SetAttr, FerryObjectSetAttr.
  bool mutable_fields = false;
  /// The fields in VisitAttrs order. Recorded at registration for default-constructible
  /// nodes, else from the first object that reflection sees.
  std::vector<FieldInfo> fields;
  bool fields_recorded = false;
  /// Copies an object of exactly this type (its C++ copy constructor), for StructuralTransform
  /// to copy a node whose children changed; null when the type is not copy-constructible or
  /// was registered at run time (then the copy is made by `create` and the field table).
  ObjectPtr<Object> (*copy)(const Object* obj) = nullptr;

  /// The field called `name`, or nullptr.
  FERRY_DLL const FieldInfo* FindField(std::string_view name) const;
};

namespace details {
FERRY_DLL void RegisterNode(NodeInfo info);

template <typename T, typename = void>
struct HasSEqualReduce : std::false_type {};
template <typename T>
struct HasSEqualReduce<T, std::void_t<decltype(std::declval<const T&>().SEqualReduce(
                              std::declval<const T*>(), std::declval<SEqualReducer>()))>>
    : std::true_type {};
template <typename T, typename = void>
struct HasSHashReduce : std::false_type {};
template <typename T>
struct HasSHashReduce<
    T, std::void_t<decltype(std::declval<const T&>().SHashReduce(std::declval<SHashReducer>()))>>
    : std::true_type {};
template <typename T, typename = void>
struct HasVisitAttrs : std::false_type {};
template <typename T>
struct HasVisitAttrs<
    T, std::void_t<decltype(std::declval<T&>().VisitAttrs(std::declval<AttrVisitor*>()))>>
    : std::true_type {};
template <typename T, typename = void>
struct TypeMutable : std::false_type {};
template <typename T>
struct TypeMutable<T, std::void_t<decltype(T::_type_mutable)>>
    : std::bool_constant<T::_type_mutable> {};
template <typename T, typename = void>
struct SEqualByFields : std::false_type {};
template <typename T>
struct SEqualByFields<T, std::void_t<decltype(T::_type_sequal_by_fields)>>
    : std::bool_constant<T::_type_sequal_by_fields> {};

/// Registers `T` for reflection (FERRY_REGISTER_NODE_TYPE).
template <typename T>
bool RegisterNodeType() {
  static_assert(std::is_base_of_v<Object, T>, "FERRY_REGISTER_NODE_TYPE: T must be an Object");
  static_assert(HasSEqualReduce<T>::value == HasSHashReduce<T>::value,
                "FERRY_REGISTER_NODE_TYPE: define both SEqualReduce and SHashReduce, or neither");
  NodeInfo info;
  info.type_index = T::RuntimeTypeIndex();
  info.type_key = T::_type_key;
  info.object_size = sizeof(T);
  info.object_align = alignof(T);
  if constexpr (HasVisitAttrs<T>::value) {
    info.visit_attrs = [](Object* obj, AttrVisitor* v) { static_cast<T*>(obj)->VisitAttrs(v); };
  } else {
    // A base without fields of its own (registered so that types made at run time can extend
    // it): no fields to visit. It inherits VisitAttrs of no registered parent either.
    info.visit_attrs = [](Object*, AttrVisitor*) {};
  }
  if constexpr (std::is_default_constructible_v<T>) {
    info.create = [](const NodeInfo&) -> ObjectPtr<Object> { return make_object<T>(); };
    info.construct_at = [](void* mem) { new (mem) T(); };
    info.destroy_at = [](Object* obj) { static_cast<T*>(obj)->~T(); };
  }
  if constexpr (HasSEqualReduce<T>::value) {
    info.sequal_reduce = [](const Object* lhs, const Object* rhs, SEqualReducer equal) {
      return static_cast<const T*>(lhs)->SEqualReduce(static_cast<const T*>(rhs), equal);
    };
    info.shash_reduce = [](const Object* obj, SHashReducer hash) {
      static_cast<const T*>(obj)->SHashReduce(hash);
    };
  }
  if constexpr (std::is_copy_constructible_v<T>) {
    info.copy = [](const Object* obj) -> ObjectPtr<Object> {
      return make_object<T>(*static_cast<const T*>(obj));
    };
  }
  info.sequal_by_fields = SEqualByFields<T>::value;
  info.mutable_fields = TypeMutable<T>::value;
  RegisterNode(std::move(info));
  return true;
}
}  // namespace details

/// Registers a node type for reflection (field access by name, MakeNode, structural equality
/// and hashing, JSON). Use once per node, at namespace scope in a .cc file. A base class
/// without `VisitAttrs` may be registered too (no fields of its own): then types made at run
/// time (Python's `ferry.py_class`) can derive from it.
#define FERRY_REGISTER_NODE_TYPE(NodeType)                                                  \
  [[maybe_unused]] static const bool FERRY_STR_CONCAT(ferry_node_registrar_, __COUNTER__) = \
      ::ferry::details::RegisterNodeType<NodeType>()

/// Records that field `field` of the C++ node registered as `type_key` has a default: the value
/// the node's default constructor gives it (a tschema schema's default is the member's
/// initialiser). MakeNode (and so Python's `ferry.make_node`) then keeps that value when the
/// field is not given instead of naming it missing; LoadJSON keeps it for every C++ field
/// already. Call it after the type's FERRY_REGISTER_NODE_TYPE (FERRY_REGISTER_FIELD_DEFAULT
/// does so at load time); a ValueError when no such type or field is registered, a TypeError
/// when the type was registered at run time (FerryTypeSetFieldDefault records those).
FERRY_DLL void RegisterFieldDefault(std::string_view type_key, std::string_view field);

/// Calls RegisterFieldDefault(NodeType::_type_key, Field) when the library loads. Use at
/// namespace scope after the node's FERRY_REGISTER_NODE_TYPE, in the same .cc file.
#define FERRY_REGISTER_FIELD_DEFAULT(NodeType, Field)                                      \
  [[maybe_unused]] static const bool FERRY_STR_CONCAT(ferry_field_default_, __COUNTER__) = \
      (::ferry::RegisterFieldDefault(NodeType::_type_key, Field), true)

/// The NodeInfo of the object's type (or its nearest registered ancestor), with its fields
/// recorded; nullptr when no such type is registered.
FERRY_DLL const NodeInfo* GetNodeInfo(const Object* obj);
/// The NodeInfo registered under `type_key`, or nullptr. Its fields may not be recorded yet
/// (`fields_recorded`) when the node has no default constructor and no object was seen.
FERRY_DLL const NodeInfo* GetNodeInfo(std::string_view type_key);

/// The field `name` of `obj`; an AttributeError naming the type and the field when absent.
FERRY_DLL Any GetAttr(const ObjectRef& obj, std::string_view name);
/// Writes the field `name` of `obj` in place, converting `value` as MakeNode does. An
/// AttributeError when there is no such field or the type is not `_type_mutable`; a TypeError
/// (or OverflowError) naming the field when the value does not convert: the object is unchanged
/// then. Every holder of `obj` sees the write.
///
///     SetAttr(counter, "count", 3);
FERRY_DLL void SetAttr(const ObjectRef& obj, std::string_view name, const AnyView& value);
/// The field names of `obj`, in VisitAttrs order (empty for an unregistered type).
FERRY_DLL Array<String> ListAttrNames(const ObjectRef& obj);
/// Creates the node registered as `type_key` from named field values. Every field without a
/// recorded default (FerryTypeSetFieldDefault, RegisterFieldDefault) must be given: a ValueError
/// lists the missing and the unknown names; a TypeError names the field, the expected and the given
/// type.
FERRY_DLL ObjectRef MakeNode(std::string_view type_key, const Map<String, Any>& fields);
/// A readable text form: `test.Add(a=test.Var(name="x"), b=1)`. Objects met twice print as
/// `#1` after their first appearance, marked `#1=`; very deep or large values are cut with
/// "...".
FERRY_DLL std::string Repr(const AnyView& value);

}  // namespace ferry

#endif  // FERRY_REFLECTION_REFLECTION_H_
