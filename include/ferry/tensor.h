/// \file ferry/tensor.h
/// `Tensor` (type key "ferry.Tensor"; TVM's NDArray): an n-dimensional array in DLPack layout on
/// any device. The object holds a `DLTensor` whose shape and strides live in the same allocation,
/// and a release hook that returns the memory to whoever owns it: Ferry's own allocator
/// (`Empty`), or the producer of a DLPack hand-over (`FromDLPack`), whose deleter runs exactly
/// once when the last reference goes.
///
///     Tensor t = Tensor::Empty({2, 3}, DataType::Float(32));   // CPU, 64-byte aligned
///     static_cast<float*>(t.data_ptr())[0] = 1.0f;
///     DLManagedTensorVersioned* out = t.ToDLPackVersioned();    // for NumPy, PyTorch, ...
///
/// A Function parameter of type Tensor accepts a Tensor or a borrowed `DLTensor*` (a view that
/// must not outlive the call); a `DLTensor*` parameter borrows either without touching counts.
/// Both may write, so both refuse a read-only tensor (ValueError naming the argument); a
/// function that only reads says so with `ConstTensor` or `const DLTensor*` and accepts it.
#ifndef FERRY_TENSOR_H_
#define FERRY_TENSOR_H_

#include <algorithm>  // std::equal
#include <cstdint>    // int64_t
#include <vector>     // Empty's shape

#include "ferry/any.h"
#include "ferry/container/array.h"  // ArrayObj::ThrowIndexError
#include "ferry/dlpack.h"

namespace ferry {

/// How Tensor::Empty allocates on a device other than the CPU (SetTensorAllocator). `alloc`
/// returns `nbytes` (possibly 0) aligned to `alignment` on `device`, or NULL when out of memory;
/// `free` takes back what `alloc` gave. Both are called with `ctx`.
struct TensorAllocator {
  void* (*alloc)(void* ctx, DLDevice device, size_t nbytes, size_t alignment) = nullptr;
  void (*free)(void* ctx, DLDevice device, void* ptr) = nullptr;
  void* ctx = nullptr;
};

/// Registers the allocator of a device type (replacing an earlier one; tensors made before keep
/// the allocator that made them). An allocator for kDLCPU replaces the built-in one.
FERRY_DLL void SetTensorAllocator(DLDeviceType device_type, TensorAllocator allocator);

/// A read-only run of int64 (a tensor's shape or strides): indexable, bounds checked.
class IntSpan {
 public:
  IntSpan(const int64_t* data, size_t size) : data_(data), size_(size) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const { return data_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  /// The element at `index`, bounds checked (IndexError).
  int64_t operator[](int64_t index) const {
    if (static_cast<uint64_t>(index) >= size_) {
      ArrayObj::ThrowIndexError(index, static_cast<int64_t>(size_));
    }
    return data_[index];
  }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator std::vector<int64_t>() const { return {begin(), end()}; }
  bool operator==(const std::vector<int64_t>& other) const {
    return size_ == other.size() && std::equal(begin(), end(), other.begin());
  }

 private:
  const int64_t* data_;
  size_t size_;
};

/// The data of a Tensor. `dl_tensor` always has its shape and strides set (computed when the
/// producer gave none); the members after it belong to the library.
class TensorObj : public Object {
 public:
  DLTensor dl_tensor;

  /// DLPACK_FLAG_BITMASK_* of the tensor (read-only); FerryTensorObject::flags.
  uint64_t flags_ = 0;
  /// Releases the memory when the tensor dies; NULL for a borrowed view.
  void (*release_)(TensorObj* self) = nullptr;
  /// What release_ needs: the DLPack hand-over, or the allocator that made the data.
  void* manager_ = nullptr;
  TensorAllocator allocator_;
  /// The owner's release, for a tensor made by FerryTensorFromDLTensor.
  void (*owner_deleter_)(void* owner) = nullptr;

  TensorObj() = default;
  TensorObj(const TensorObj&) = delete;
  TensorObj& operator=(const TensorObj&) = delete;
  ~TensorObj() {
    if (release_ != nullptr) release_(this);
  }

  static constexpr const char* _type_key = "ferry.Tensor";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(TensorObj, Object, kFerryTensor);
};

/// A tensor seen through a parameter that only reads it: the read API of `Tensor` (shape, dtype,
/// a `const` data pointer, ...) and nothing that writes. A read-only tensor (a NumPy array with
/// `writeable=False`, a broadcast view, an array over `bytes`, DLPack's read-only flag) converts
/// to a `ConstTensor` argument; a `Tensor` or `DLTensor*` argument refuses it with a ValueError
/// naming the argument. Every Tensor is a ConstTensor.
///
///     FERRY_REGISTER_GLOBAL("demo.sum").set_body_typed([](ConstTensor t) { ... });
class ConstTensor : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(ConstTensor, ObjectRef, TensorObj);

  /// Hands the tensor out as DLPack 1.1 with the read-only flag set: the consumer must not write
  /// through a tensor that was lent for reading.
  FERRY_DLL DLManagedTensorVersioned* ToDLPackVersioned() const;

  const DLTensor* GetDLTensorPtr() const { return &get()->dl_tensor; }
  int32_t ndim() const { return get()->dl_tensor.ndim; }
  IntSpan shape() const {
    return IntSpan(get()->dl_tensor.shape, static_cast<size_t>(get()->dl_tensor.ndim));
  }
  /// Strides in elements (computed for a compact tensor when the producer gave none).
  IntSpan strides() const {
    return IntSpan(get()->dl_tensor.strides, static_cast<size_t>(get()->dl_tensor.ndim));
  }
  DataType dtype() const {
    FerryDataType t;
    t.code = get()->dl_tensor.dtype.code;
    t.bits = get()->dl_tensor.dtype.bits;
    t.lanes = get()->dl_tensor.dtype.lanes;
    return DataType(t);
  }
  DLDevice device() const { return get()->dl_tensor.device; }
  /// The first element: the data pointer plus the byte offset.
  const void* data_ptr() const {
    return static_cast<const char*>(get()->dl_tensor.data) + get()->dl_tensor.byte_offset;
  }
  /// The number of elements: the product of the shape (1 for a 0-d tensor, 0 for an empty one).
  FERRY_DLL int64_t numel() const;
  /// The bytes the elements take when compact: numel() times the element size.
  FERRY_DLL int64_t nbytes() const;
  /// Whether the elements are compact in row-major order (dimensions of size 1 ignored). An
  /// empty tensor is, whatever its strides: it has no element out of place.
  FERRY_DLL bool IsContiguous() const;
  /// Whether the memory is read-only (DLPACK_FLAG_BITMASK_READ_ONLY): made from read-only
  /// memory, or from a DLPack hand-over that said so.
  bool IsReadOnly() const { return (get()->flags_ & DLPACK_FLAG_BITMASK_READ_ONLY) != 0; }
};

/// A tensor that may be written. A read-only tensor can still be held as a `Tensor` in C++
/// (FromDLPackVersioned keeps the flag; check IsReadOnly() before writing), but an argument of
/// type `Tensor` refuses one (ValueError): take `ConstTensor` to read only.
class Tensor : public ConstTensor {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Tensor, ConstTensor, TensorObj);

  /// A compact (row-major) tensor of uninitialized memory: on the CPU 64-byte aligned, on other
  /// devices from the allocator registered for them (ValueError when there is none). A negative
  /// dimension, a void dtype, or sizes whose product (zero-sized dimensions left out, as NumPy
  /// does) or byte count passes int64 is a ValueError; memory that cannot be had a MemoryError.
  FERRY_DLL static Tensor Empty(std::vector<int64_t> shape, DataType dtype,
                                DLDevice device = DLDevice{kDLCPU, 0});
  /// Takes ownership of an unversioned DLPack tensor: its deleter runs once, when the last
  /// reference goes. On error (ValueError: an unsupported dtype, a negative dimension, sizes
  /// that multiply past int64, strides and byte offset that reach past int64 bytes, ...)
  /// nothing is taken and the caller still owns `managed`.
  FERRY_DLL static Tensor FromDLPack(DLManagedTensor* managed);
  /// As FromDLPack, for a versioned tensor (major version 1); the read-only flag is kept.
  FERRY_DLL static Tensor FromDLPackVersioned(DLManagedTensorVersioned* managed);
  /// Hands the tensor out (adding a reference that the consumer's call of the deleter drops).
  /// A read-only tensor is a ValueError: the unversioned struct cannot say so.
  FERRY_DLL DLManagedTensor* ToDLPack() const;
  /// Hands the tensor out as DLPack 1.1, with the read-only flag when it is read-only.
  FERRY_DLL DLManagedTensorVersioned* ToDLPackVersioned() const;

  DLTensor* GetDLTensorPtr() const { return &const_cast<TensorObj*>(get())->dl_tensor; }
  /// The first element: the data pointer plus the byte offset.
  void* data_ptr() const {
    return static_cast<char*>(get()->dl_tensor.data) + get()->dl_tensor.byte_offset;
  }
};

namespace details {
/// The `small_len` of a kFerryDLTensorPtr cell holding a `const DLTensor*`: the pointee is
/// read-only, so a `DLTensor*` or `Tensor` parameter refuses it.
constexpr uint32_t kDLTensorPtrReadOnly = 1;
/// A Tensor viewing a borrowed DLTensor (shape and strides copied, the data not owned), with
/// DLPack `flags` (DLPACK_FLAG_BITMASK_READ_ONLY for a read-only view).
FERRY_DLL ObjectPtr<Object> TensorViewOf(const DLTensor* tensor, uint64_t flags = 0);
/// Whether the cell holds a read-only tensor: a Tensor with the read-only flag, or a
/// `const DLTensor*`.
inline bool IsReadOnlyTensorCell(const FerryAny* v) {
  if (v->type_index == kFerryDLTensorPtr) return (v->small_len & kDLTensorPtrReadOnly) != 0;
  if (v->type_index != kFerryTensor) return false;
  const auto* obj = static_cast<const TensorObj*>(ObjectUnsafe::FromHeader(v->v_obj));
  return (obj->flags_ & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
}
/// "ferry.Tensor(float32, shape=(2, 3), cpu:0, [0, 1, 2, ...])".
FERRY_DLL std::string TensorRepr(const TensorObj* tensor);
template <>
struct HasCustomRefTraits<Tensor> : std::true_type {};
template <>
struct HasCustomRefTraits<ConstTensor> : std::true_type {};
}  // namespace details

/// A borrowed DLTensor that may be written: an argument points at the caller's struct, or at a
/// Tensor's own. A read-only tensor (or a `const DLTensor*`) does not convert: a function that
/// only reads takes `const DLTensor*`.
template <>
struct TypeTraits<DLTensor*> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(DLTensor* src, FerryAny* out) {
    if (src == nullptr) {
      *out = details::NoneCell();
      return;
    }
    out->type_index = kFerryDLTensorPtr;
    out->small_len = 0;
    out->v_ptr = src;
  }
  /// An Any holding a DLTensor* still only borrows it (as a void* does).
  static void MoveToAny(DLTensor* src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<DLTensor*> TryCast(const FerryAny* v) {
    if (details::IsReadOnlyTensorCell(v)) return std::nullopt;
    if (v->type_index == kFerryDLTensorPtr) return static_cast<DLTensor*>(v->v_ptr);
    if (v->type_index == kFerryTensor) {
      return &static_cast<TensorObj*>(details::ObjectUnsafe::FromHeader(v->v_obj))->dl_tensor;
    }
    if (v->type_index == kFerryNone) return static_cast<DLTensor*>(nullptr);
    return std::nullopt;
  }
  static std::string TypeStr() { return "DLTensor*"; }
};

/// A borrowed DLTensor that is only read: accepts what `DLTensor*` does and read-only tensors.
/// Stored, it keeps saying read-only (kDLTensorPtrReadOnly), so it cannot become a `DLTensor*`
/// again on the way through a call.
template <>
struct TypeTraits<const DLTensor*> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const DLTensor* src, FerryAny* out) {
    TypeTraits<DLTensor*>::CopyToAnyView(const_cast<DLTensor*>(src), out);
    if (src != nullptr) out->small_len = details::kDLTensorPtrReadOnly;
  }
  static void MoveToAny(const DLTensor* src, FerryAny* out) { CopyToAnyView(src, out); }
  static std::optional<const DLTensor*> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryDLTensorPtr) return static_cast<const DLTensor*>(v->v_ptr);
    if (v->type_index == kFerryTensor) {
      return &static_cast<const TensorObj*>(details::ObjectUnsafe::FromHeader(v->v_obj))->dl_tensor;
    }
    if (v->type_index == kFerryNone) return static_cast<const DLTensor*>(nullptr);
    return std::nullopt;
  }
  static std::string TypeStr() { return "const DLTensor*"; }
};

namespace details {
/// The conversions shared by Tensor and ConstTensor arguments; `Ref` says whether a read-only
/// tensor is accepted.
template <typename Ref, bool kAcceptsReadOnly>
struct TensorRefTraits {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Ref& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(Ref src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) {
    if (!kAcceptsReadOnly && IsReadOnlyTensorCell(v)) return false;
    return v->type_index == kFerryTensor || v->type_index == kFerryDLTensorPtr ||
           v->type_index == kFerryNone;
  }
  static std::optional<Ref> TryCast(const FerryAny* v) {
    if (!kAcceptsReadOnly && IsReadOnlyTensorCell(v)) return std::nullopt;
    if (v->type_index == kFerryTensor) {
      return Ref(ObjectUnsafe::PtrFromRaw<Object>(ObjectUnsafe::FromHeader(v->v_obj)));
    }
    if (v->type_index == kFerryDLTensorPtr) {
      const uint64_t flags =
          (v->small_len & kDLTensorPtrReadOnly) != 0 ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
      return Ref(TensorViewOf(static_cast<const DLTensor*>(v->v_ptr), flags));
    }
    if (v->type_index == kFerryNone) return Ref(ObjectPtr<Object>());
    return std::nullopt;
  }
};
}  // namespace details

/// A tensor that may be written; a read-only one is a ValueError naming the argument.
template <>
struct TypeTraits<Tensor> : details::TensorRefTraits<Tensor, false> {
  static std::string TypeStr() { return TensorObj::_type_key; }
};

/// A tensor that is only read: any tensor, read-only or not.
template <>
struct TypeTraits<ConstTensor> : details::TensorRefTraits<ConstTensor, true> {
  static std::string TypeStr() { return "const ferry.Tensor"; }
};

}  // namespace ferry

#endif  // FERRY_TENSOR_H_
