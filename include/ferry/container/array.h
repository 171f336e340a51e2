/// \file ferry/container/array.h
/// `Array<T>`: an immutable-when-shared sequence of values with copy-on-write mutation.
///
/// Every array is an `ArrayObj` holding `Any` cells in the same allocation as its header;
/// `Array<T>` is a typed view of it. Mutating through one handle never shows through another:
/// `push_back`, `Set`, `insert`, `erase`, `resize` and `clear` copy the cells first when the
/// storage is shared, and work in place (amortized O(1) at the end) when it is not.
///
///     Array<int64_t> a = {1, 2, 3};
///     Array<int64_t> b = a;       // shares the storage
///     b.push_back(4);             // copies it: a is still [1, 2, 3]
///     int64_t x = b[3];           // bounds checked: IndexError names index and size
///
/// Converting an untyped array (say, from Python) to `Array<T>` checks every element once and
/// shares the storage; a failure names the first element that does not convert.
#ifndef FERRY_CONTAINER_ARRAY_H_
#define FERRY_CONTAINER_ARRAY_H_

#include <algorithm>         // std::min, std::max
#include <cstddef>           // ptrdiff_t
#include <initializer_list>  // Array{...}
#include <iterator>          // iterator tags and traits
#include <new>               // placement new
#include <string>            // TypeStr
#include <type_traits>       // enable_if
#include <vector>            // construction from std::vector

#include "ferry/any.h"

namespace ferry {

namespace details {
struct ArrayAccess;
}  // namespace details

/// The storage of every Array: `size()` cells, with room for `capacity()`, right after the
/// header. Read-only to users; `Array<T>` mutates it only when it holds the only reference.
class ArrayObj : public Object {
 public:
  /// An empty array with room for `capacity` cells. Array<T> allocates it with
  /// details::ArrayAccess::New, in a malloc'ed block that a unique array grows with realloc;
  /// one made otherwise (make_inplace_array_object<ArrayObj, Any>(capacity, capacity)) works
  /// too and grows by copying.
  explicit ArrayObj(int64_t capacity) : capacity_(capacity) {}
  ArrayObj(const ArrayObj&) = delete;
  ArrayObj& operator=(const ArrayObj&) = delete;
  ~ArrayObj() { ReleaseCells(0, size_); }

  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  const Any* begin() const { return cells(); }
  const Any* end() const { return cells() + size_; }
  /// The cell at `index`; an IndexError naming index and size when out of range.
  const Any& at(int64_t index) const {
    if (static_cast<uint64_t>(index) >= static_cast<uint64_t>(size_)) {
      ThrowIndexError(index, size_);
    }
    return cells()[index];
  }
  const Any& operator[](int64_t index) const { return at(index); }

  /// The IndexError of an access at `index` into an array of `size` cells.
  [[noreturn]] FERRY_DLL static void ThrowIndexError(int64_t index, int64_t size);

  static constexpr const char* _type_key = "ferry.Array";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(ArrayObj, Object, kFerryArray);

 private:
  Any* cells() const { return reinterpret_cast<Any*>(const_cast<ArrayObj*>(this) + 1); }
  void EmplaceBack(Any value) {
    new (cells() + size_) Any(std::move(value));
    ++size_;
  }
  void ShrinkTo(int64_t size) {
    ReleaseCells(size, size_);
    size_ = std::min(size_, size);
  }
  /// Ends the cells [first, last): drops the references they own. Unlike ~Any it does not
  /// reset each cell to None, since the cells are about to be freed or overwritten.
  void ReleaseCells(int64_t first, int64_t last) {
    for (Any* cell = cells() + first; cell < cells() + last; ++cell) {
      if (details::IsObjectIndex(cell->type_index())) {
        details::ObjectUnsafe::DecRef(details::ObjectUnsafe::FromHeader(cell->raw()->v_obj));
      }
    }
  }
  /// Opens a gap of `count` cells at `index` (cells are trivially relocatable).
  void OpenGap(int64_t index, int64_t count);
  /// Destroys the cells [first, last) and closes the gap.
  void CloseGap(int64_t first, int64_t last);

  int64_t size_ = 0;
  int64_t capacity_;

  template <typename>
  friend class Array;
  friend struct details::ArrayAccess;
};

namespace details {
/// The operations of Array<T> that need not be inline.
struct ArrayAccess {
  /// Makes `*data` an ArrayObj held only by the caller with room for `capacity` cells, copying
  /// or moving the cells when it is shared or too small; returns it.
  FERRY_DLL static ArrayObj* PrepareWrite(ObjectPtr<Object>* data, int64_t capacity);
  /// A new unshared empty array with room for `capacity` cells.
  FERRY_DLL static ObjectPtr<Object> New(int64_t capacity);
};
/// The array every empty Array<T> shares.
FERRY_DLL const ObjectPtr<Object>& EmptyArray();
}  // namespace details

inline void ArrayObj::OpenGap(int64_t index, int64_t count) {
  // Any is a plain 16-byte cell plus an owned reference, so moving its bytes moves it.
  std::memmove(static_cast<void*>(cells() + index + count), static_cast<void*>(cells() + index),
               static_cast<size_t>(size_ - index) * sizeof(Any));
  size_ += count;
}

inline void ArrayObj::CloseGap(int64_t first, int64_t last) {
  ReleaseCells(first, last);
  std::memmove(static_cast<void*>(cells() + first), static_cast<void*>(cells() + last),
               static_cast<size_t>(size_ - last) * sizeof(Any));
  size_ -= last - first;
}

/// A typed view of an ArrayObj. `T` is any type with TypeTraits: an object reference, an
/// integer, double, bool, String, std::string, or Any for an untyped array. Reading an element
/// converts its cell to `T` (objects and plain values need no allocation).
template <typename T>
class Array : public ObjectRef {
  static_assert(TypeTraitsOf<T>::kEnabled, "Array<T>: T has no TypeTraits");
  static_assert(!std::is_same_v<T, AnyView>, "Array<AnyView> would dangle; use Array<Any>");

 public:
  using value_type = T;
  /// What reading an element gives: a reference to the cell for Array<Any>, else a T.
  using ReadType = std::conditional_t<std::is_same_v<T, Any>, const Any&, T>;

  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = ReadType;

    iterator() = default;
    explicit iterator(const Any* cell) : cell_(cell) {}
    ReadType operator*() const { return Read(*cell_); }
    ReadType operator[](difference_type n) const { return Read(cell_[n]); }
    iterator& operator++() { return ++cell_, *this; }
    iterator& operator--() { return --cell_, *this; }
    iterator operator++(int) { return iterator(cell_++); }
    iterator operator--(int) { return iterator(cell_--); }
    iterator& operator+=(difference_type n) { return cell_ += n, *this; }
    iterator& operator-=(difference_type n) { return cell_ -= n, *this; }
    iterator operator+(difference_type n) const { return iterator(cell_ + n); }
    iterator operator-(difference_type n) const { return iterator(cell_ - n); }
    difference_type operator-(const iterator& other) const { return cell_ - other.cell_; }
    bool operator==(const iterator& other) const { return cell_ == other.cell_; }
    bool operator!=(const iterator& other) const { return cell_ != other.cell_; }
    bool operator<(const iterator& other) const { return cell_ < other.cell_; }

   private:
    const Any* cell_ = nullptr;
  };
  using const_iterator = iterator;

  /// An empty array (shares one global empty storage; no allocation).
  Array() : ObjectRef(details::EmptyArray()) {}
  Array(std::initializer_list<T> init) : Array(init.begin(), init.end()) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Array(const std::vector<T>& init) : Array(init.begin(), init.end()) {}
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Array(It first, It last) : Array() {
    assign(first, last);
  }
  /// `count` copies of `value`.
  Array(size_t count, const T& value) : Array() { resize(static_cast<int64_t>(count), value); }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Array, ObjectRef, ArrayObj);

  size_t size() const { return static_cast<size_t>(get()->size()); }
  bool empty() const { return get()->empty(); }
  int64_t capacity() const { return get()->capacity(); }
  /// The element at `index`, bounds checked (IndexError naming index and size).
  ReadType operator[](int64_t index) const { return Read(get()->at(index)); }
  ReadType at(int64_t index) const { return Read(get()->at(index)); }
  ReadType front() const { return Read(get()->at(0)); }
  ReadType back() const { return Read(get()->at(get()->size() - 1)); }
  iterator begin() const { return iterator(get()->begin()); }
  iterator end() const { return iterator(get()->end()); }

  void push_back(T value) { Append(std::move(value)); }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
  }
  /// Removes the last element; IndexError when empty.
  void pop_back() {
    const int64_t size = get()->size();
    if (size == 0) ArrayObj::ThrowIndexError(-1, 0);
    Writable(size)->ShrinkTo(size - 1);
  }
  /// Replaces the element at `index` (bounds checked).
  void Set(int64_t index, T value) {
    const int64_t size = get()->size();
    if (static_cast<uint64_t>(index) >= static_cast<uint64_t>(size)) {
      ArrayObj::ThrowIndexError(index, size);
    }
    Writable(size)->cells()[index] = Any(std::move(value));
  }
  /// Inserts `value` before `pos`; returns an iterator to it.
  iterator insert(iterator pos, T value) {
    const int64_t index = CheckPosition(pos);
    Any cell(std::move(value));
    ArrayObj* array = Writable(get()->size() + 1);
    array->OpenGap(index, 1);
    new (array->cells() + index) Any(std::move(cell));
    return iterator(array->cells() + index);
  }
  /// Inserts the elements [first, last) before `pos`; returns an iterator to the first.
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(iterator pos, It first, It last) {
    const int64_t index = CheckPosition(pos);
    std::vector<Any> cells;
    for (; first != last; ++first) cells.emplace_back(T(*first));
    const int64_t count = static_cast<int64_t>(cells.size());
    ArrayObj* array = Writable(get()->size() + count);
    array->OpenGap(index, count);
    for (int64_t i = 0; i < count; ++i) new (array->cells() + index + i) Any(std::move(cells[i]));
    return iterator(array->cells() + index);
  }
  /// Removes the element at `pos`; returns an iterator to the one after it.
  iterator erase(iterator pos) { return erase(pos, pos + 1); }
  /// Removes the elements [first, last).
  iterator erase(iterator first, iterator last) {
    const int64_t begin = first - this->begin();
    const int64_t end = last - this->begin();
    const int64_t size = get()->size();
    if (begin < 0 || end > size || begin > end)
      ArrayObj::ThrowIndexError(begin < 0 ? begin : end, size);
    ArrayObj* array = Writable(size);
    array->CloseGap(begin, end);
    return iterator(array->cells() + begin);
  }
  /// Grows with copies of `value` or shrinks to `size` elements.
  void resize(int64_t size, const T& value = T()) {
    if (size < 0) ArrayObj::ThrowIndexError(size, get()->size());
    const Any fill(value);  // before the storage moves: `value` may be one of our elements
    ArrayObj* array = Writable(std::max(size, get()->size()));
    array->ShrinkTo(size);
    while (array->size() < size) array->EmplaceBack(Any(fill));
  }
  /// Makes room for `capacity` elements without changing the contents.
  void reserve(int64_t capacity) { Writable(std::max(capacity, get()->size())); }
  void clear() {
    if (data_.unique()) {
      static_cast<ArrayObj*>(get_mutable())->ShrinkTo(0);
    } else {
      data_ = details::EmptyArray();
    }
  }
  /// Replaces the contents with the elements [first, last), which may be this array's own.
  template <typename It>
  void assign(It first, It last) {
    Array fresh;
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      fresh.reserve(static_cast<int64_t>(std::distance(first, last)));
    }
    for (; first != last; ++first) fresh.push_back(T(*first));
    *this = std::move(fresh);
  }

  /// Converts the cell of an element to `T`.
  static ReadType Read(const Any& cell) {
    if constexpr (std::is_same_v<T, Any>) {
      return cell;
    } else {
      return cell.cast<T>();
    }
  }

 private:
  /// Appends a cell made from `value` (a T, or what List<U> stores in its Array<Any>: a U) in
  /// place. The hot loop of building an array: one check for "unique and not full", then the
  /// cell is constructed where it lives, from `value` itself (a temporary Any, written as two
  /// words and read back as one, would stall on store forwarding), and the size stored, not
  /// read back. `value` must not refer into this array (it may move first).
  template <typename U>
  void Append(U&& value) {
    auto* array = static_cast<ArrayObj*>(get_mutable());
    const int64_t size = array->size_;
    if (!data_.unique() || size >= array->capacity_) {
      array = details::ArrayAccess::PrepareWrite(&data_, size + 1);
    }
    new (array->cells() + size) Any(std::forward<U>(value));
    array->size_ = size + 1;
  }
  template <typename>
  friend class List;

  /// The storage, unshared and with room for `capacity` cells.
  ArrayObj* Writable(int64_t capacity) {
    auto* array = static_cast<ArrayObj*>(get_mutable());
    if (data_.unique() && array->capacity() >= capacity) return array;
    return details::ArrayAccess::PrepareWrite(&data_, capacity);
  }
  int64_t CheckPosition(iterator pos) const {
    const int64_t index = pos - begin();
    if (index < 0 || index > get()->size()) ArrayObj::ThrowIndexError(index, get()->size());
    return index;
  }
};

namespace details {
template <typename T>
struct HasCustomRefTraits<Array<T>> : std::true_type {};
}  // namespace details

/// An array travels as its ArrayObj; reading `Array<T>` back checks every element (O(n), no
/// copy) and shares the storage.
template <typename T>
struct TypeTraits<Array<T>> {
  using ElemTraits = TypeTraitsOf<T>;
  static constexpr bool kEnabled = true;
  static void CopyToAnyView(const Array<T>& src, FerryAny* out) {
    TypeTraits<ObjectRef>::CopyToAnyView(src, out);
  }
  static void MoveToAny(Array<T> src, FerryAny* out) {
    TypeTraits<ObjectRef>::MoveToAny(std::move(src), out);
  }
  static bool Check(const FerryAny* v) { return v->type_index == kFerryArray && FirstBad(v) < 0; }
  static std::optional<Array<T>> TryCast(const FerryAny* v) {
    if (!Check(v)) return std::nullopt;
    return Array<T>(
        details::ObjectUnsafe::PtrFromRaw<Object>(details::ObjectUnsafe::FromHeader(v->v_obj)));
  }
  static std::string MismatchDetail(const FerryAny* v) {
    if (v->type_index != kFerryArray) return std::string();
    const int64_t bad = FirstBad(v);
    if (bad < 0) return std::string();
    const FerryAny* cell = Cells(v)->at(bad).raw();
    return "element " + std::to_string(bad) + ": " +
           details::DescribeCastFailure(cell, ElemTraits::TypeStr(),
                                        details::MismatchDetail<ElemTraits>(cell));
  }
  static std::string TypeStr() { return "Array[" + ElemTraits::TypeStr() + "]"; }

 private:
  static const ArrayObj* Cells(const FerryAny* v) {
    return static_cast<const ArrayObj*>(details::ObjectUnsafe::FromHeader(v->v_obj));
  }
  /// The index of the first element that does not convert to T, or -1.
  static int64_t FirstBad(const FerryAny* v) {
    if constexpr (!std::is_same_v<T, Any>) {
      const ArrayObj* array = Cells(v);
      for (int64_t i = 0; i < array->size(); ++i) {
        if (!details::CanCast<ElemTraits>(array->begin()[i].raw())) return i;
      }
    }
    return -1;
  }
};

}  // namespace ferry

#endif  // FERRY_CONTAINER_ARRAY_H_
