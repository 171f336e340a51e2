/// \file ferry/object.h
/// The object model: `Object` (the data), `ObjectPtr<T>` (an owning pointer) and `ObjectRef`
/// (the handle users pass around), with intrusive atomic reference counting, the runtime type
/// registry behind `IsInstance`, and the casting verbs `as`, `Downcast` and `GetRef`.
///
///     class AddNode : public Object {
///      public:
///       static constexpr const char* _type_key = "demo.Add";
///       FERRY_DECLARE_FINAL_OBJECT_INFO(AddNode, Object);
///     };
///     class Add : public ObjectRef {
///      public:
///       FERRY_DEFINE_OBJECT_REF_METHODS(Add, ObjectRef, AddNode);
///     };
#ifndef FERRY_OBJECT_H_
#define FERRY_OBJECT_H_

#include <cstddef>      // std::nullptr_t, size_t
#include <cstdint>      // int32_t
#include <type_traits>  // std::is_base_of_v
#include <utility>      // std::move, std::swap

#include "ferry/base.h"

namespace ferry {

class Object;
class ObjectRef;
template <typename T>
class ObjectPtr;

namespace details {
struct ObjectUnsafe;

/// Runs `destroy(obj)` (the object's destructor and free) under the release-depth guard:
/// frees nested below a fixed depth are queued and run by the outermost call, so releasing a
/// long chain never overflows the stack. Deleters of objects that can own references call it.
FERRY_DLL void ObjectFreeGuarded(FerryObject* obj, void (*destroy)(FerryObject*)) noexcept;
/// Registers a type with the runtime registry (or finds it); throws ferry::Error on conflict.
FERRY_DLL int32_t TypeRegister(const char* type_key, int32_t static_type_index,
                               int32_t parent_type_index, int32_t num_child_slots,
                               bool child_slots_can_overflow);
/// The type index hint of a type whose RuntimeTypeIndex has not run yet in this library: far
/// from every real index, so that no index lies in its range of child slots.
inline constexpr int32_t kTypeIndexUnseen = INT32_MIN;
/// True when `type_index` has `ancestor_index` (at depth `ancestor_depth`) on its ancestor chain.
FERRY_DLL bool TypeIsDerivedFrom(int32_t type_index, int32_t ancestor_index,
                                 int32_t ancestor_depth) noexcept;
/// The key of a registered type index, or "<unknown>".
FERRY_DLL const char* TypeIndexToKey(int32_t type_index) noexcept;
/// Throws a ferry::Error of `kind`; lets low-level headers raise without including error.h.
[[noreturn]] FERRY_DLL void ThrowError(const char* kind, const char* message);
/// Throws the TypeError of a failed Downcast, naming both type keys.
[[noreturn]] FERRY_DLL void ThrowDowncastError(int32_t from_type_index, const char* to_type_key);

/// The live objects of each type index while the leak check (`FERRY_LEAK_CHECK=1`) is on, else
/// nullptr. Set once by libferry's first initializer, before any object exists, and never
/// changed after, so that with the check off counting costs one load and a branch not taken.
FERRY_DLL extern int64_t* leak_check_counts;
/// Counts an object of `type_index` made (`delta` 1) or freed (-1) when the leak check is on.
/// Called by every allocator (SetHeader) and every deleter's destroy step.
inline void LeakCheckCount(int32_t type_index, int64_t delta) noexcept {
  int64_t* counts = leak_check_counts;
  if (FERRY_UNLIKELY(counts != nullptr)) {
    __atomic_fetch_add(counts + type_index, delta, __ATOMIC_RELAXED);
  }
}
}  // namespace details

/// The base of every object. It carries the 16-byte FerryObject header and nothing else: no
/// vtable, so an `Object*` is a `FerryObject*` for every language that speaks the C ABI.
///
/// A subclass declares `_type_key` and one of the FERRY_DECLARE_*_OBJECT_INFO macros; it may
/// reserve `_type_child_slots` indices for its descendants so `IsInstance` is a range check.
class Object {
 public:
  static constexpr const char* _type_key = "ferry.Object";
  static constexpr bool _type_final = false;
  static constexpr int32_t _type_child_slots = 0;
  static constexpr bool _type_child_slots_can_overflow = true;
  static constexpr int32_t _type_depth = 0;
  static constexpr int32_t RuntimeTypeIndex() { return kFerryObject; }

  int32_t type_index() const { return header_.type_index; }
  /// The registered key of this object's dynamic type.
  const char* GetTypeKey() const { return details::TypeIndexToKey(header_.type_index); }
  /// True when this object is a `T` or derives from it.
  template <typename T>
  bool IsInstance() const;
  /// This object as a `const T*`, or nullptr when it is not a `T`.
  template <typename T>
  const T* as() const {
    return IsInstance<T>() ? static_cast<const T*>(this) : nullptr;
  }
  /// Current strong count; racy by nature when other threads hold references.
  int32_t use_count() const {
    return static_cast<int32_t>(__atomic_load_n(&header_.ref_counter, __ATOMIC_RELAXED));
  }
  bool unique() const { return use_count() == 1; }

  Object() : header_{0, kFerryObject, nullptr} {}
  /// Copying an object copies its data, never its count or its identity.
  Object(const Object&) : Object() {}
  Object(Object&&) : Object() {}
  Object& operator=(const Object&) { return *this; }
  Object& operator=(Object&&) { return *this; }
  ~Object() = default;

 private:
  // The protocol of the FerryObject header, shared with every frontend (c_api.h).
  void IncRef() { FerryObjectIncRefInline(&header_); }
  // The deleter is called directly. One whose destructor can release other objects runs itself
  // under details::ObjectFreeGuarded, so a trivially destructible object's drop is just its free.
  void DecRef() { FerryObjectDecRefInline(&header_); }

  FerryObject header_;

  template <typename>
  friend class ObjectPtr;
  friend struct details::ObjectUnsafe;
};

/// An owning pointer to an object of type `T`: copies add a reference, the last drop frees.
template <typename T>
class ObjectPtr {
 public:
  ObjectPtr() = default;
  ObjectPtr(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  ObjectPtr(const ObjectPtr& other) : ObjectPtr(other.data_) {}
  ObjectPtr(ObjectPtr&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  ObjectPtr(const ObjectPtr<U>& other)  // NOLINT(google-explicit-constructor)
      : ObjectPtr(other.data_) {}
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  ObjectPtr(ObjectPtr<U>&& other) noexcept  // NOLINT(google-explicit-constructor)
      : data_(other.data_) {
    other.data_ = nullptr;
  }
  ~ObjectPtr() { reset(); }

  ObjectPtr& operator=(const ObjectPtr& other) {
    ObjectPtr(other).swap(*this);
    return *this;
  }
  ObjectPtr& operator=(ObjectPtr&& other) noexcept {
    ObjectPtr(std::move(other)).swap(*this);
    return *this;
  }
  void swap(ObjectPtr& other) noexcept { std::swap(data_, other.data_); }

  T* get() const { return static_cast<T*>(data_); }
  T* operator->() const { return get(); }
  T& operator*() const { return *get(); }
  explicit operator bool() const { return data_ != nullptr; }
  void reset() {
    if (data_ != nullptr) {
      Object* data = data_;
      data_ = nullptr;
      data->DecRef();
    }
  }
  int32_t use_count() const { return data_ != nullptr ? data_->use_count() : 0; }
  bool unique() const { return use_count() == 1; }

  bool operator==(const ObjectPtr& other) const { return data_ == other.data_; }
  bool operator!=(const ObjectPtr& other) const { return data_ != other.data_; }
  bool operator==(std::nullptr_t) const { return data_ == nullptr; }
  bool operator!=(std::nullptr_t) const { return data_ != nullptr; }

 private:
  /// Takes a new reference to `data`.
  explicit ObjectPtr(Object* data) : data_(data) {
    if (data_ != nullptr) data_->IncRef();
  }

  Object* data_ = nullptr;

  template <typename>
  friend class ObjectPtr;
  friend class ObjectRef;
  friend struct details::ObjectUnsafe;
};

/// The handle users pass around: a nullable reference to an `Object`. Subclasses name their
/// data type as `ContainerType` and add typed accessors (FERRY_DEFINE_OBJECT_REF_METHODS).
class ObjectRef {
 public:
  using ContainerType = Object;
  static constexpr bool _type_is_nullable = true;

  ObjectRef() = default;
  explicit ObjectRef(ObjectPtr<Object> data) : data_(std::move(data)) {}

  /// True when both refer to the same object (or both are null).
  bool same_as(const ObjectRef& other) const { return data_ == other.data_; }
  bool defined() const { return data_ != nullptr; }
  const Object* get() const { return data_.get(); }
  const Object* operator->() const { return get(); }
  int32_t use_count() const { return data_.use_count(); }
  bool unique() const { return data_.unique(); }
  /// The object as a `const T*`, or nullptr when null or not a `T`.
  template <typename T>
  const T* as() const {
    static_assert(std::is_base_of_v<Object, T>, "as<T>(): T must be an Object type");
    if (data_ != nullptr && data_->template IsInstance<T>()) {
      return static_cast<const T*>(data_.get());
    }
    return nullptr;
  }

  /// Identity comparison, as in TVM; value types such as String compare by value.
  bool operator==(const ObjectRef& other) const { return data_ == other.data_; }
  bool operator!=(const ObjectRef& other) const { return data_ != other.data_; }
  bool operator<(const ObjectRef& other) const { return data_.get() < other.data_.get(); }

 protected:
  Object* get_mutable() const { return data_.get(); }

  ObjectPtr<Object> data_;

  friend struct details::ObjectUnsafe;
};

/// Hashes and compares references by identity, for std::unordered_map keys.
struct ObjectPtrHash {
  size_t operator()(const ObjectRef& a) const { return reinterpret_cast<size_t>(a.get()); }
  template <typename T>
  size_t operator()(const ObjectPtr<T>& a) const {
    return reinterpret_cast<size_t>(a.get());
  }
};
struct ObjectPtrEqual {
  bool operator()(const ObjectRef& a, const ObjectRef& b) const { return a.same_as(b); }
  template <typename T>
  bool operator()(const ObjectPtr<T>& a, const ObjectPtr<T>& b) const {
    return a == b;
  }
};

namespace details {
/// Access to internals for the allocator, casts and the C ABI glue; not for users.
struct ObjectUnsafe {
  static FerryObject* GetHeader(const Object* obj) {
    return const_cast<FerryObject*>(&obj->header_);
  }
  static Object* FromHeader(FerryObject* header) { return reinterpret_cast<Object*>(header); }
  static void IncRef(Object* obj) { obj->IncRef(); }
  static void DecRef(Object* obj) { obj->DecRef(); }
  /// A pointer taking a new reference.
  template <typename T>
  static ObjectPtr<T> PtrFromRaw(Object* obj) {
    return ObjectPtr<T>(obj);
  }
  /// The first reference to a freshly constructed object that no other thread can see yet: a
  /// plain increment instead of a locked instruction (it still counts any reference the
  /// constructor handed out).
  template <typename T>
  static ObjectPtr<T> PtrFromNew(Object* obj) {
    obj->header_.ref_counter += 1;
    return PtrFromOwned<T>(obj);
  }
  /// A pointer adopting a reference the caller already owns.
  template <typename T>
  static ObjectPtr<T> PtrFromOwned(Object* obj) {
    ObjectPtr<T> ptr;
    ptr.data_ = obj;
    return ptr;
  }
  /// Releases the reference into the caller's hands.
  template <typename T>
  static Object* MoveToOwned(ObjectPtr<T>* ptr) {
    Object* obj = ptr->data_;
    ptr->data_ = nullptr;
    return obj;
  }
  static const ObjectPtr<Object>& GetPtr(const ObjectRef& ref) { return ref.data_; }
  /// Swaps the objects `*shared` and `*own` refer to, reading and writing `*shared` in one
  /// atomic exchange: two threads swapping into one `*shared` each take out a different
  /// reference, so none is lost or released twice (reflection's writes to object fields).
  static void ExchangeRef(ObjectRef* shared, ObjectRef* own) {
    own->data_.data_ =
        __atomic_exchange_n(&shared->data_.data_, own->data_.data_, __ATOMIC_ACQ_REL);
  }
  static ObjectPtr<Object>&& MovePtr(ObjectRef&& ref) { return std::move(ref.data_); }
  /// Stamps a new object's type and deleter and counts it for the leak check; whoever calls
  /// it must call LeakCheckCount(type_index, -1) when the object is destroyed.
  static void SetHeader(Object* obj, int32_t type_index, void (*deleter)(FerryObject*)) {
    obj->header_.type_index = type_index;
    obj->header_.deleter = deleter;
    LeakCheckCount(type_index, 1);
  }
};
}  // namespace details

namespace details {
/// Whether type `index` is `T` or one of the descendants in its reserved slots, given T's
/// registered index `begin`.
template <typename T>
inline bool TypeIndexInSlots(int32_t index, int32_t begin) {
  // Descendants placed in T's reserved slots lie in [begin, begin + slots].
  const uint32_t offset = static_cast<uint32_t>(index) - static_cast<uint32_t>(begin);
  return offset <= static_cast<uint32_t>(T::_type_child_slots);
}
/// The rest of IsInstance after TypeIndexInSlots failed.
template <typename T>
inline bool TypeIndexIsOverflowedDescendant(int32_t index, int32_t begin) {
  if constexpr (T::_type_final || !T::_type_child_slots_can_overflow) {
    return false;
  } else {
    // Overflowed descendants are always allocated after their ancestor.
    if (index < begin) return false;
    return TypeIsDerivedFrom(index, begin, T::_type_depth);
  }
}
/// IsInstance before T's RuntimeTypeIndex ran in this library: registers T first. Out of line,
/// so that IsInstance stays small enough to inline everywhere.
template <typename T>
[[gnu::noinline, gnu::cold]] bool TypeIndexIsInstanceUnseen(int32_t index) {
  const int32_t begin = T::RuntimeTypeIndex();
  return TypeIndexInSlots<T>(index, begin) || TypeIndexIsOverflowedDescendant<T>(index, begin);
}
}  // namespace details

template <typename T>
inline bool Object::IsInstance() const {
  static_assert(std::is_base_of_v<Object, T>, "IsInstance<T>(): T must be an Object type");
  if constexpr (std::is_same_v<T, Object>) {
    return true;
  } else {
    // T's index as this library last saw it: a plain load, not the guarded function-local
    // static of RuntimeTypeIndex. kTypeIndexUnseen until that ran here (another library may
    // have made the object), then the out-of-line path registers T and tests again.
    // The unseen hint fails the slot test, so the hit costs no extra branch.
    const int32_t begin = T::_TypeIndexHint();
    const int32_t index = header_.type_index;
    // A header whose index is not an object type's (a freed or overwritten block) would make
    // the range checks below answer for an unrelated type.
    FERRY_DCHECK(index >= kFerryStaticObjectBegin);
    if (details::TypeIndexInSlots<T>(index, begin)) return true;
    if (FERRY_UNLIKELY(begin == details::kTypeIndexUnseen)) {
      return details::TypeIndexIsInstanceUnseen<T>(index);
    }
    return details::TypeIndexIsOverflowedDescendant<T>(index, begin);
  }
}

/// Common part of the declaration macros; `RuntimeTypeIndex()` registers the type at first use
/// (thread-safe through the function-local static) and checks misuse at compile time.
#define FERRY_OBJECT_INFO_COMMON_(TypeName, ParentType)                                         \
  static_assert(!ParentType::_type_final, #TypeName ": parent type " #ParentType                \
                                                    " is declared final and cannot be derived " \
                                                    "from");                                    \
  static constexpr int32_t _type_depth = ParentType::_type_depth + 1;                           \
  using _type_parent = ParentType;                                                              \
  static int32_t RuntimeTypeIndex() {                                                           \
    static_assert(std::is_base_of_v<ParentType, TypeName>,                                      \
                  #TypeName " must derive from " #ParentType);                                  \
    static_assert(TypeName::_type_child_slots == 0 || ParentType::_type_child_slots == 0 ||     \
                      TypeName::_type_child_slots < ParentType::_type_child_slots,              \
                  #TypeName                                                                     \
                  ": _type_child_slots must be smaller than the parent's "                      \
                  "(set it explicitly when the parent reserves slots)");                        \
    static const int32_t tindex = [] {                                                          \
      const int32_t index = ::ferry::details::TypeRegister(                                     \
          TypeName::_type_key, -1, ParentType::RuntimeTypeIndex(), TypeName::_type_child_slots, \
          TypeName::_type_child_slots_can_overflow && !TypeName::_type_final);                  \
      if (index >= 0) __atomic_store_n(&_type_index_hint_, index, __ATOMIC_RELAXED);            \
      return index;                                                                             \
    }();                                                                                        \
    return tindex;                                                                              \
  }                                                                                             \
  /* RuntimeTypeIndex() once it ran in this library, else kTypeIndexUnseen: IsInstance reads */ \
  /* it without the guard of the function-local static. */                                      \
  static inline int32_t _type_index_hint_ = ::ferry::details::kTypeIndexUnseen;                 \
  static int32_t _TypeIndexHint() { return __atomic_load_n(&_type_index_hint_, __ATOMIC_RELAXED); }

/// Declares a type that others may derive from.
///
///     FERRY_DECLARE_BASE_OBJECT_INFO(ExprNode, Object);
#define FERRY_DECLARE_BASE_OBJECT_INFO(TypeName, ParentType) \
  FERRY_OBJECT_INFO_COMMON_(TypeName, ParentType)            \
  static_assert(true, "")

/// Declares a leaf type: `IsInstance` against it is one comparison.
///
///     FERRY_DECLARE_FINAL_OBJECT_INFO(AddNode, ExprNode);
#define FERRY_DECLARE_FINAL_OBJECT_INFO(TypeName, ParentType) \
  static constexpr bool _type_final = true;                   \
  static constexpr int32_t _type_child_slots = 0;             \
  FERRY_OBJECT_INFO_COMMON_(TypeName, ParentType)             \
  static_assert(true, "")

/// Declares a built-in type with a fixed index from c_api.h; used by the runtime itself.
#define FERRY_DECLARE_BUILTIN_OBJECT_INFO_(TypeName, ParentType, TypeIndex)    \
  static_assert(!ParentType::_type_final, #TypeName ": parent type is final"); \
  static constexpr int32_t _type_depth = ParentType::_type_depth + 1;          \
  using _type_parent = ParentType;                                             \
  static constexpr int32_t RuntimeTypeIndex() { return TypeIndex; }            \
  static constexpr int32_t _TypeIndexHint() { return TypeIndex; }              \
  static_assert(true, "")

/// Defines the constructors, accessors and `ContainerType` of a nullable reference class.
///
///     FERRY_DEFINE_OBJECT_REF_METHODS(Add, Expr, AddNode);
#define FERRY_DEFINE_OBJECT_REF_METHODS(TypeName, ParentType, ObjectName) \
  TypeName() = default;                                                   \
  FERRY_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName, true)

/// Same as FERRY_DEFINE_OBJECT_REF_METHODS for a reference that is never null: there is no
/// default constructor, and a Downcast of a null reference to it fails.
#define FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(TypeName, ParentType, ObjectName) \
  FERRY_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName, false)

/// The one body of the two reference macros above (not for direct use).
#define FERRY_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName, Nullable)                  \
  explicit TypeName(::ferry::ObjectPtr<::ferry::Object> n) : ParentType(std::move(n)) {}      \
  TypeName(const TypeName&) = default;                                                        \
  TypeName(TypeName&&) = default;                                                             \
  TypeName& operator=(const TypeName&) = default;                                             \
  TypeName& operator=(TypeName&&) = default;                                                  \
  const ObjectName* operator->() const { return static_cast<const ObjectName*>(get()); }      \
  const ObjectName* get() const { return static_cast<const ObjectName*>(ParentType::get()); } \
  using ContainerType = ObjectName;                                                           \
  static constexpr bool _type_is_nullable = Nullable

/// Defines `ObjectName* CopyOnWrite()`: a mutable pointer to the data, copied first when any
/// other reference shares it, so the mutation is never visible through another handle.
///
///     FERRY_DEFINE_OBJECT_REF_COW_METHOD(AddNode);
///     add.CopyOnWrite()->a = x;
#define FERRY_DEFINE_OBJECT_REF_COW_METHOD(ObjectName)                                           \
  ObjectName* CopyOnWrite() {                                                                    \
    if (!data_) ::ferry::details::ThrowError("ValueError", "CopyOnWrite() on a null reference"); \
    if (!data_.unique()) {                                                                       \
      ::ferry::ObjectPtr<::ferry::Object> copy =                                                 \
          ::ferry::make_object<ObjectName>(*static_cast<const ObjectName*>(data_.get()));        \
      data_.swap(copy);                                                                          \
    }                                                                                            \
    return static_cast<ObjectName*>(data_.get());                                                \
  }                                                                                              \
  static_assert(true, "")

/// Casts `ref` to the reference type `SubRef`, throwing a TypeError that names both type keys
/// when the object is not a `SubRef::ContainerType`. A null reference casts to a nullable type.
///
///     Add add = Downcast<Add>(expr);
template <typename SubRef, typename BaseRef>
inline SubRef Downcast(BaseRef ref) {
  // An ObjectRef, or a value that adopts an object (String).
  static_assert(std::is_constructible_v<SubRef, ObjectPtr<Object>>,
                "Downcast<R>(): R must be an object reference");
  using Target = typename SubRef::ContainerType;
  if (ref.defined()) {
    if (!ref.get()->template IsInstance<Target>()) {
      details::ThrowDowncastError(ref.get()->type_index(), Target::_type_key);
    }
  } else if (!SubRef::_type_is_nullable) {
    details::ThrowDowncastError(kFerryNone, Target::_type_key);
  }
  return SubRef(details::ObjectUnsafe::MovePtr(std::move(ref)));
}

/// The reference of type `RefType` to an object the caller holds by pointer (adds a reference).
///
///     Add self = GetRef<Add>(this);
template <typename RefType, typename ObjType>
inline RefType GetRef(const ObjType* ptr) {
  static_assert(std::is_base_of_v<typename RefType::ContainerType, ObjType>,
                "GetRef<R>(p): p must point to R::ContainerType or a subclass of it");
  return RefType(details::ObjectUnsafe::PtrFromRaw<Object>(
      const_cast<Object*>(static_cast<const Object*>(ptr))));
}

/// The owning pointer to an object the caller holds by pointer (adds a reference).
template <typename T, typename ObjType>
inline ObjectPtr<T> GetObjectPtr(const ObjType* ptr) {
  static_assert(std::is_base_of_v<T, ObjType>, "GetObjectPtr<T>(p): p must point to a T");
  return details::ObjectUnsafe::PtrFromRaw<T>(const_cast<Object*>(static_cast<const Object*>(ptr)));
}

}  // namespace ferry

#include "ferry/memory.h"  // make_object, used by FERRY_DEFINE_OBJECT_REF_COW_METHOD

#endif  // FERRY_OBJECT_H_
