/// \file ferry/container/shape.h
/// `Shape`: an immutable array of int64 dimensions, as tensors use. The dimensions live in the
/// same allocation as the header.
///
///     Shape s = {2, 3, 4};
///     int64_t n = s.Product();   // 24
///     int64_t d = s[1];          // 3, bounds checked
///
/// A Function argument of type Shape also accepts an array of integers (a Python list).
#ifndef FERRY_CONTAINER_SHAPE_H_
#define FERRY_CONTAINER_SHAPE_H_

#include <initializer_list>  // Shape{...}
#include <iterator>          // iterator traits
#include <ostream>           // operator<<
#include <string>            // TypeStr
#include <vector>            // construction from std::vector

#include "ferry/container/array.h"

namespace ferry {

/// The data of a Shape: `size` dimensions at `data`.
class ShapeObj : public Object {
 public:
  const int64_t* data = nullptr;
  uint64_t size = 0;

  static constexpr const char* _type_key = "ferry.Shape";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(ShapeObj, Object, kFerryShape);
};

namespace details {
/// A ShapeObj holding a copy of the `size` dimensions at `data`.
FERRY_DLL ObjectPtr<Object> MakeShape(const int64_t* data, size_t size);
}  // namespace details

class Shape : public ObjectRef {
 public:
  using iterator = const int64_t*;
  using const_iterator = const int64_t*;

  /// The shape of a scalar: no dimensions.
  Shape() : Shape(nullptr, 0) {}
  Shape(std::initializer_list<int64_t> dims) : Shape(dims.begin(), dims.size()) {}
  Shape(const std::vector<int64_t>& dims)  // NOLINT(google-explicit-constructor)
      : Shape(dims.data(), dims.size()) {}
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) : Shape(std::vector<int64_t>(first, last)) {}
  Shape(const int64_t* data, size_t size) : ObjectRef(details::MakeShape(data, size)) {}

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Shape, ObjectRef, ShapeObj);

  size_t size() const { return static_cast<size_t>(get()->size); }
  size_t ndim() const { return size(); }
  bool empty() const { return size() == 0; }
  const int64_t* data() const { return get()->data; }
  iterator begin() const { return data(); }
  iterator end() const { return data() + size(); }
  /// The dimension at `index`, bounds checked (IndexError naming index and size).
  int64_t operator[](int64_t index) const {
    if (static_cast<uint64_t>(index) >= get()->size) {
      ArrayObj::ThrowIndexError(index, static_cast<int64_t>(get()->size));
    }
    return data()[index];
  }
  int64_t at(int64_t index) const { return (*this)[index]; }
  int64_t front() const { return (*this)[0]; }
  int64_t back() const { return (*this)[static_cast<int64_t>(size()) - 1]; }
  /// The number of elements: the product of the dimensions (1 for a scalar); an OverflowError
  /// when it does not fit in int64.
  FERRY_DLL int64_t Product() const;

  bool operator==(const Shape& other) const {
    return size() == other.size() && std::equal(begin(), end(), other.begin());
  }
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

/// Prints "(2, 3, 4)".
FERRY_DLL std::ostream& operator<<(std::ostream& os, const Shape& shape);

namespace details {
template <>
struct HasCustomRefTraits<Shape> : std::true_type {};
}  // namespace details

template <>
struct TypeTraits<Shape> {
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Shape& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(Shape src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) {
    return v->type_index == kFerryShape || TypeTraits<Array<int64_t>>::Check(v);
  }
  static std::optional<Shape> TryCast(const FerryAny* v) {
    if (v->type_index == kFerryShape) {
      return Shape(
          details::ObjectUnsafe::PtrFromRaw<Object>(details::ObjectUnsafe::FromHeader(v->v_obj)));
    }
    if (auto dims = TypeTraits<Array<int64_t>>::TryCast(v)) {
      return Shape(dims->begin(), dims->end());
    }
    return std::nullopt;
  }
  static std::string MismatchDetail(const FerryAny* v) {
    return TypeTraits<Array<int64_t>>::MismatchDetail(v);
  }
  static std::string TypeStr() { return ShapeObj::_type_key; }
};

}  // namespace ferry

#endif  // FERRY_CONTAINER_SHAPE_H_
