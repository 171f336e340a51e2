/// \file ferry/container/list.h
/// `List<T>`: a mutable sequence shared by every holder, as a Python list is. Unlike `Array`
/// there is no copy-on-write: a `push_back` through one handle is seen through every other, in
/// C++ and in Python alike.
///
///     List<int64_t> xs = {1, 2};
///     List<int64_t> same = xs;      // one list, two handles
///     same.push_back(3);            // xs.size() == 3 too
///     Array<int64_t> snap = xs.ToArray();   // an immutable snapshot, O(1)
///
/// A `ListNode` holds its elements in an `Array<Any>` it alone writes to; a snapshot shares that
/// storage until the list's next write copies it (the Array's copy-on-write), so a snapshot
/// never changes. Reads are safe from many threads while nobody writes; writes are not
/// synchronized.
#ifndef FERRY_CONTAINER_LIST_H_
#define FERRY_CONTAINER_LIST_H_

#include <atomic>            // item_type
#include <initializer_list>  // List{...}
#include <iterator>          // iterator traits
#include <string>            // TypeStr
#include <type_traits>       // enable_if
#include <utility>           // move

#include "ferry/any.h"
#include "ferry/container/array.h"
#include "ferry/details/mutable_container.h"

namespace ferry {

namespace details {
struct FieldConstraint;
}  // namespace details

/// The storage of every List: its elements, reflected as the one field `data` (so structural
/// equality and hashing, JSON, pickle and Repr treat a List as a node holding an Array).
class ListNode : public Object {
 public:
  Array<Any> data;
  /// The type a typed field of a run-time type (a py_class `ferry.List[T]`) gave this list when
  /// the list went into it, or null. libferry's writes (the Python methods, the C ABI) check new
  /// items against it, so the list never holds what the field's loader would refuse. Set once:
  /// a list cannot go into fields of two different item types.
  std::atomic<const details::FieldConstraint*> item_type{nullptr};

  template <typename Visitor>
  void VisitAttrs(Visitor* v) {
    v->Visit("data", &data);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "ferry.List";
  static constexpr bool _type_final = true;
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(ListNode, Object, kFerryList);
};

/// A typed view of a ListNode. `T` is a type with TypeTraits (Any for untyped); reading an
/// element converts it (TypeError naming it when it does not).
template <typename T>
class List : public ObjectRef {
  static_assert(TypeTraitsOf<T>::kEnabled, "List<T>: T has no TypeTraits");
  static_assert(!std::is_same_v<T, AnyView>, "List<AnyView> would dangle; use List<Any>");

 public:
  using value_type = T;

  /// Walks the elements the list held when the walk began (details::SnapshotIterator): writing
  /// the list inside the loop, even clearing it, neither invalidates it nor shows in it.
  using iterator = details::SnapshotIterator<Array<T>>;

  /// A new empty list (each one its own object).
  List() : ObjectRef(make_object<ListNode>()) {}
  List(std::initializer_list<T> init) : List(init.begin(), init.end()) {}
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  List(It first, It last) : List() {
    for (; first != last; ++first) push_back(T(*first));
  }
  /// A new list holding the elements of `array` (a copy: the array never changes).
  explicit List(const Array<T>& array) : List() { obj()->data = Array<Any>(Untyped(array)); }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(List, ObjectRef, ListNode);

  size_t size() const { return get()->data.size(); }
  bool empty() const { return get()->data.empty(); }
  /// The element at `index`; IndexError naming index and size when out of range.
  T operator[](int64_t index) const { return Read(get()->data.at(index)); }
  T at(int64_t index) const { return Read(get()->data.at(index)); }
  T front() const { return Read(get()->data.front()); }
  T back() const { return Read(get()->data.back()); }
  /// Iterators over the elements as they were at begin() (see `iterator`): a loop may write the
  /// list, even clear it, without invalidating them.
  iterator begin() const { return iterator(Typed()); }
  iterator end() const { return iterator(); }

  void push_back(T value) { obj()->data.Append(std::move(value)); }
  /// Removes the last element; IndexError when empty.
  void pop_back() {
    if (empty()) ArrayObj::ThrowIndexError(-1, 0);
    obj()->data.pop_back();
  }
  /// Replaces the element at `index`.
  void Set(int64_t index, T value) { obj()->data.Set(index, Any(std::move(value))); }
  /// Inserts before `index` (0 <= index <= size()).
  void insert(int64_t index, T value) {
    Array<Any>& data = obj()->data;
    CheckPosition(index);
    data.insert(data.begin() + index, Any(std::move(value)));
  }
  /// Removes the element at `index`, or the elements [first, last).
  void erase(int64_t index) { erase(index, index + 1); }
  void erase(int64_t first, int64_t last) {
    Array<Any>& data = obj()->data;
    CheckPosition(first);
    CheckPosition(last);
    if (first < last) data.erase(data.begin() + first, data.begin() + last);
  }
  void clear() { obj()->data.clear(); }
  void resize(int64_t size, const T& value = T()) { obj()->data.resize(size, Any(value)); }
  void reserve(int64_t capacity) { obj()->data.reserve(capacity); }

  /// The elements now, as an immutable Array (O(1): shares the storage until the next write).
  Array<T> ToArray() const { return Typed(); }

 private:
  ListNode* obj() const { return const_cast<ListNode*>(get()); }
  Array<T> Typed() const {
    return Array<T>(details::ObjectUnsafe::PtrFromRaw<Object>(
        const_cast<Object*>(static_cast<const Object*>(get()->data.get()))));
  }
  static Array<Any> Untyped(const Array<T>& array) {
    return Array<Any>(details::ObjectUnsafe::PtrFromRaw<Object>(
        const_cast<Object*>(static_cast<const Object*>(array.get()))));
  }
  void CheckPosition(int64_t index) const {
    if (index < 0 || static_cast<size_t>(index) > size()) {
      ArrayObj::ThrowIndexError(index, static_cast<int64_t>(size()));
    }
  }
  static T Read(const Any& cell) {
    if constexpr (std::is_same_v<T, Any>) {
      return cell;
    } else {
      return cell.cast<T>();
    }
  }
};

namespace details {
template <typename T>
struct HasCustomRefTraits<List<T>> : std::true_type {};
/// A new ListNode holding the elements of an ArrayObj cell (a List parameter given an Array: a
/// copy the caller does not see mutated).
FERRY_DLL ObjectPtr<Object> ListFromArrayCell(const FerryAny* array);
}  // namespace details

/// A list travels as its ListNode. Reading `List<T>` back checks every element (O(n)) and
/// shares the list; an Array (a Python list, say) is accepted too, as a new List holding its
/// elements.
template <typename T>
struct TypeTraits<List<T>>
    : details::MutableContainerTraits<List<T>, ListNode, Array<T>, &details::ListFromArrayCell> {
  using ElemTraits = TypeTraitsOf<T>;
  static std::string TypeStr() { return "List[" + ElemTraits::TypeStr() + "]"; }
};

/// The name of ListNode before it was a node by the naming rule of docs/object_model.md; kept.
using ListObj = ListNode;

}  // namespace ferry

#endif  // FERRY_CONTAINER_LIST_H_
