/// \file list.cc
/// List and Dict: their reflection (a node with one field `data`, so structural equality,
/// hashing, JSON and pickle follow the Array or Map inside), the conversions from Array and
/// Map, the globals other languages use, and the C ABI.
#include "ferry/container/list.h"

#include <algorithm>  // min, max
#include <iterator>   // reverse_iterator
#include <vector>     // slice values

#include "c_api_internal.h"
#include "dynamic_type_internal.h"
#include "ferry/container/dict.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"
#include "globals_internal.h"

namespace ferry {

FERRY_REGISTER_NODE_TYPE(ListNode);
FERRY_REGISTER_NODE_TYPE(DictNode);

namespace details {

ObjectPtr<Object> ListFromArrayCell(const FerryAny* array) {
  auto list = make_object<ListNode>();
  list->data = Array<Any>(ObjectUnsafe::PtrFromRaw<Object>(ObjectUnsafe::FromHeader(array->v_obj)));
  return list;
}

ObjectPtr<Object> DictFromMapCell(const FerryAny* map) {
  auto dict = make_object<DictNode>();
  dict->data =
      Map<Any, Any>(ObjectUnsafe::PtrFromRaw<Object>(ObjectUnsafe::FromHeader(map->v_obj)));
  return dict;
}

}  // namespace details

using details::CheckArgCount;

namespace {

List<Any> ArgList(const AnyView& arg, const char* func) {
  if (arg.type_index() != kFerryList) {
    FERRY_THROW(TypeError) << func << ": expected ferry.List, got " << arg.GetTypeKey();
  }
  return arg.cast<List<Any>>();
}
Dict<Any, Any> ArgDict(const AnyView& arg, const char* func) {
  if (arg.type_index() != kFerryDict) {
    FERRY_THROW(TypeError) << func << ": expected ferry.Dict, got " << arg.GetTypeKey();
  }
  return arg.cast<Dict<Any, Any>>();
}

}  // namespace

// Every global below returns promptly and never waits: registered quick(), so Python keeps the
// GIL for them.

/// ferry.List(*items) -> a new List.
FERRY_REGISTER_GLOBAL("ferry.List")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      List<Any> list;
      list.reserve(n);
      for (int32_t i = 0; i < n; ++i) list.push_back(Any(args[i]));
      *out = std::move(list);
    })
    .quick();

/// ferry.ListInsert(list, index, value): inserts before index (0 <= index <= size).
FERRY_REGISTER_GLOBAL("ferry.ListInsert")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 3, "ferry.ListInsert");
      List<Any> list = ArgList(args[0], "ferry.ListInsert");
      details::CheckNewListItems(*list.get(), args + 2, 1, args[1].cast<int64_t>());
      list.insert(args[1].cast<int64_t>(), Any(args[2]));
    })
    .quick();

/// ferry.ListErase(list, first, last): removes the elements [first, last).
FERRY_REGISTER_GLOBAL("ferry.ListErase")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 3, "ferry.ListErase");
      ArgList(args[0], "ferry.ListErase").erase(args[1].cast<int64_t>(), args[2].cast<int64_t>());
    })
    .quick();

/// ferry.ListClear(list)
FERRY_REGISTER_GLOBAL("ferry.ListClear")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 1, "ferry.ListClear");
      ArgList(args[0], "ferry.ListClear").clear();
    })
    .quick();

/// ferry.ListToArray(list) -> an Array snapshot of the elements (O(1)).
FERRY_REGISTER_GLOBAL("ferry.ListToArray")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.ListToArray");
      *out = ArgList(args[0], "ferry.ListToArray").ToArray();
    })
    .quick();

// -- One call per Python-level operation. The Python classes (python/ferry/container.py) make
// each of their operations one call of these (quick: the GIL is held, and no Python code runs
// between reading the list and writing it), so an operation is atomic with respect to other
// Python threads, as a Python list's is. Indexes and slices follow Python's rules here, where
// the size they are resolved against is read.

namespace {

/// A slice resolved against a size, as PySlice_AdjustIndices does.
struct Slice {
  int64_t start, stop, step, length;
};

/// `start:stop:step` (each an int or None) over `size` elements, with Python's clamping.
Slice ResolveSlice(const AnyView& start, const AnyView& stop, const AnyView& step, int64_t size) {
  Slice s{0, 0, 1, 0};
  if (step.type_index() != kFerryNone) s.step = step.cast<int64_t>();
  if (s.step == 0) FERRY_THROW(ValueError) << "slice step cannot be zero";
  // Python clamps a bound into the range as for an index, then a step's direction decides the
  // ends; the Python caller clamps huge ints to +-2**62 first.
  auto bound = [&](const AnyView& v, int64_t absent) {
    if (v.type_index() == kFerryNone) return absent;
    int64_t i = v.cast<int64_t>();
    if (i < 0) {
      i += size;
      if (i < 0) i = s.step < 0 ? -1 : 0;
    } else if (i >= size) {
      i = s.step < 0 ? size - 1 : size;
    }
    return i;
  };
  s.start = bound(start, s.step < 0 ? size - 1 : 0);
  s.stop = bound(stop, s.step < 0 ? -1 : size);
  if (s.step < 0) {
    s.length = s.stop < s.start ? (s.start - s.stop - 1) / -s.step + 1 : 0;
  } else {
    s.length = s.start < s.stop ? (s.stop - s.start - 1) / s.step + 1 : 0;
  }
  return s;
}

/// `index` of a sequence of `size` elements, negative ones counted from the end; an IndexError
/// naming both when out of range.
int64_t ResolveIndex(int64_t index, int64_t size) {
  const int64_t at = index < 0 ? index + size : index;
  if (at < 0 || at >= size) {
    FERRY_THROW(IndexError) << "List index " << index << " out of range for size " << size;
  }
  return at;
}

ListNode* ListArg(const AnyView* args, int32_t n, int32_t at_least, const char* func) {
  if (n < at_least) {
    FERRY_THROW(TypeError) << func << " takes at least " << at_least << " arguments but " << n
                           << " were given";
  }
  if (args[0].type_index() != kFerryList) {
    FERRY_THROW(TypeError) << func << ": expected ferry.List, got " << args[0].GetTypeKey();
  }
  return static_cast<ListNode*>(
      details::ObjectUnsafe::FromHeader(const_cast<FerryObject*>(args[0].raw()->v_obj)));
}

/// The storage of a List after `list[slice] = values` (Python's rules: a plain slice takes any
/// number of values, an extended one exactly as many as it selects).
void AssignSlice(Array<Any>* data, const Slice& s, const AnyView* values, int64_t count) {
  if (s.step == 1) {
    const int64_t stop = std::max(s.start, s.stop);
    std::vector<Any> cells(values, values + count);  // before the storage moves
    data->erase(data->begin() + s.start, data->begin() + stop);
    data->insert(data->begin() + s.start, cells.begin(), cells.end());
    return;
  }
  if (count != s.length) {
    FERRY_THROW(ValueError) << "attempt to assign sequence of size " << count
                            << " to extended slice of size " << s.length;
  }
  for (int64_t i = 0; i < count; ++i) data->Set(s.start + i * s.step, Any(values[i]));
}

/// Removes the elements `slice` selects.
void DeleteSlice(Array<Any>* data, const Slice& s) {
  if (s.length == 0) return;
  if (s.step == 1) {
    data->erase(data->begin() + s.start, data->begin() + s.stop);
    return;
  }
  // As an ascending walk: from the lowest selected index, every |step|-th one.
  const int64_t step = s.step < 0 ? -s.step : s.step;
  const int64_t first = s.step < 0 ? s.start + (s.length - 1) * s.step : s.start;
  Array<Any> kept;
  kept.reserve(static_cast<int64_t>(data->size()) - s.length);
  for (int64_t i = 0; i < static_cast<int64_t>(data->size()); ++i) {
    const bool selected = i >= first && (i - first) % step == 0 && (i - first) / step < s.length;
    if (!selected) kept.push_back((*data)[i]);
  }
  *data = std::move(kept);
}

}  // namespace

/// ferry.ListSetSlice(list, start, stop, step, values...): `list[start:stop:step] = values`.
FERRY_REGISTER_GLOBAL("ferry.ListSetSlice")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      ListNode* list = ListArg(args, n, 4, "ferry.ListSetSlice");
      const Slice s = ResolveSlice(args[1], args[2], args[3], list->data.size());
      details::CheckNewListItems(*list, args + 4, n - 4, s.step == 1 ? s.start : -1);
      AssignSlice(&list->data, s, args + 4, n - 4);
    })
    .quick();

/// ferry.ListDelSlice(list, start, stop, step): `del list[start:stop:step]`.
FERRY_REGISTER_GLOBAL("ferry.ListDelSlice")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 4, "ferry.ListDelSlice");
      ListNode* list = ListArg(args, n, 4, "ferry.ListDelSlice");
      DeleteSlice(&list->data, ResolveSlice(args[1], args[2], args[3], list->data.size()));
    })
    .quick();

/// ferry.ListPop(list, index) -> the element removed from `index` (negative from the end).
FERRY_REGISTER_GLOBAL("ferry.ListPop")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.ListPop");
      ListNode* list = ListArg(args, n, 2, "ferry.ListPop");
      const int64_t size = list->data.size();
      if (size == 0) FERRY_THROW(IndexError) << "pop from an empty List";
      const int64_t at = ResolveIndex(args[1].cast<int64_t>(), size);
      *out = list->data[at];
      list->data.erase(list->data.begin() + at);
    })
    .quick();

/// ferry.ListInsertClamped(list, index, value): inserts as list.insert does (an index past
/// either end means that end).
FERRY_REGISTER_GLOBAL("ferry.ListInsertClamped")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 3, "ferry.ListInsertClamped");
      ListNode* list = ListArg(args, n, 3, "ferry.ListInsertClamped");
      const int64_t size = list->data.size();
      int64_t at = args[1].cast<int64_t>();
      at = at < 0 ? std::max<int64_t>(0, at + size) : std::min(at, size);
      details::CheckNewListItems(*list, args + 2, 1, at);
      list->data.insert(list->data.begin() + at, Any(args[2]));
    })
    .quick();

/// ferry.ListExtend(list, values...): appends every value.
FERRY_REGISTER_GLOBAL("ferry.ListExtend")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      ListNode* list = ListArg(args, n, 1, "ferry.ListExtend");
      details::CheckNewListItems(*list, args + 1, n - 1, list->data.size());
      list->data.reserve(static_cast<int64_t>(list->data.size()) + n - 1);
      for (int32_t i = 1; i < n; ++i) list->data.push_back(Any(args[i]));
    })
    .quick();

/// ferry.ListReverse(list): reverses in place.
FERRY_REGISTER_GLOBAL("ferry.ListReverse")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 1, "ferry.ListReverse");
      ListNode* list = ListArg(args, n, 1, "ferry.ListReverse");
      list->data.assign(std::make_reverse_iterator(list->data.end()),
                        std::make_reverse_iterator(list->data.begin()));
    })
    .quick();

/// ferry.ListReplaceIfUnchanged(list, snapshot, values...) -> whether the list still held the
/// storage of `snapshot` (a ListToArray result), in which case its elements are now `values`.
/// A sort computes the order from a snapshot, running Python code that may write the list; this
/// writes the order back only when nothing did.
FERRY_REGISTER_GLOBAL("ferry.ListReplaceIfUnchanged")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      ListNode* list = ListArg(args, n, 2, "ferry.ListReplaceIfUnchanged");
      if (!list->data.same_as(args[1].cast<Array<Any>>())) {
        *out = false;
        return;
      }
      details::CheckNewListItems(*list, args + 2, n - 2, 0);
      list->data.assign(args + 2, args + n);
      *out = true;
    })
    .quick();

/// ferry.ListEraseIfUnchanged(list, snapshot, index) -> whether the list still held the
/// storage of `snapshot`, in which case its element `index` is now removed (remove(): the
/// index is found by Python equality on the snapshot).
FERRY_REGISTER_GLOBAL("ferry.ListEraseIfUnchanged")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 3, "ferry.ListEraseIfUnchanged");
      ListNode* list = ListArg(args, n, 3, "ferry.ListEraseIfUnchanged");
      if (!list->data.same_as(args[1].cast<Array<Any>>())) {
        *out = false;
        return;
      }
      const int64_t at = ResolveIndex(args[2].cast<int64_t>(), list->data.size());
      list->data.erase(list->data.begin() + at);
      *out = true;
    })
    .quick();

/// ferry.Dict(k0, v0, k1, v1, ...) -> a new Dict.
FERRY_REGISTER_GLOBAL("ferry.Dict")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      if (n % 2 != 0) {
        FERRY_THROW(ValueError) << "ferry.Dict takes keys and values in pairs, but got " << n
                                << " arguments";
      }
      Dict<Any, Any> dict;
      dict.reserve(static_cast<size_t>(n / 2));
      for (int32_t i = 0; i < n; i += 2) dict.Set(Any(args[i]), Any(args[i + 1]));
      *out = std::move(dict);
    })
    .quick();

/// ferry.DictSize(dict) -> int
FERRY_REGISTER_GLOBAL("ferry.DictSize")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.DictSize");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictSize").size());
    })
    .quick();

/// ferry.DictGetItem(dict, key) -> the value; KeyError naming the key.
FERRY_REGISTER_GLOBAL("ferry.DictGetItem")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.DictGetItem");
      *out = ArgDict(args[0], "ferry.DictGetItem").at(args[1]);
    })
    .quick();

/// ferry.DictSetItem(dict, key, value)
FERRY_REGISTER_GLOBAL("ferry.DictSetItem")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 3, "ferry.DictSetItem");
      Dict<Any, Any> dict = ArgDict(args[0], "ferry.DictSetItem");
      details::CheckNewDictEntry(*dict.get(), args[1], args[2]);
      dict.Set(Any(args[1]), Any(args[2]));
    })
    .quick();

/// ferry.DictErase(dict, key) -> how many entries were removed (0 or 1).
FERRY_REGISTER_GLOBAL("ferry.DictErase")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.DictErase");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictErase").erase(args[1]));
    })
    .quick();

/// ferry.DictCount(dict, key) -> 0 or 1.
FERRY_REGISTER_GLOBAL("ferry.DictCount")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.DictCount");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictCount").count(args[1]));
    })
    .quick();

/// ferry.DictClear(dict)
FERRY_REGISTER_GLOBAL("ferry.DictClear")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgCount(n, 1, "ferry.DictClear");
      ArgDict(args[0], "ferry.DictClear").clear();
    })
    .quick();

/// ferry.DictPop(dict, key) -> Array [value] of the removed entry, or [] when `key` is absent.
FERRY_REGISTER_GLOBAL("ferry.DictPop")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.DictPop");
      Dict<Any, Any> dict = ArgDict(args[0], "ferry.DictPop");
      Array<Any> found;
      if (const Any* value = dict.get()->data.get()->Find(args[1])) {
        found.push_back(*value);
        dict.erase(args[1]);
      }
      *out = std::move(found);
    })
    .quick();

/// ferry.DictPopItem(dict) -> Array [key, value] of the last entry, removed, or [] when empty.
/// O(1) amortized: the last live entry is at the end of the entry table (trailing erased
/// entries are dropped at once, see MapObj::Erase).
FERRY_REGISTER_GLOBAL("ferry.DictPopItem")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.DictPopItem");
      Dict<Any, Any> dict = ArgDict(args[0], "ferry.DictPopItem");
      Array<Any> item;
      const MapObj* map = dict.get()->data.get();
      for (const MapObj::Entry* e = map->entries_end(); e != map->entries_begin();) {
        --e;
        if (MapObj::IsErased(*e)) continue;
        item.push_back(e->key);
        item.push_back(e->value);
        dict.erase(item[0]);
        break;
      }
      *out = std::move(item);
    })
    .quick();

/// ferry.DictSetDefault(dict, key, default) -> the value under `key`, set to `default` first
/// when absent.
FERRY_REGISTER_GLOBAL("ferry.DictSetDefault")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 3, "ferry.DictSetDefault");
      Dict<Any, Any> dict = ArgDict(args[0], "ferry.DictSetDefault");
      if (const Any* value = dict.get()->data.get()->Find(args[1])) {
        *out = *value;
        return;
      }
      details::CheckNewDictEntry(*dict.get(), args[1], args[2]);
      dict.Set(Any(args[1]), Any(args[2]));
      *out = Any(args[2]);
    })
    .quick();

/// ferry.DictUpdate(dict, k0, v0, k1, v1, ...): sets every pair, in order.
FERRY_REGISTER_GLOBAL("ferry.DictUpdate")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      if (n < 1 || n % 2 != 1) {
        FERRY_THROW(TypeError) << "ferry.DictUpdate takes a dict and then keys and values in "
                                  "pairs, but got "
                               << n << " arguments";
      }
      Dict<Any, Any> dict = ArgDict(args[0], "ferry.DictUpdate");
      for (int32_t i = 1; i < n; i += 2)
        details::CheckNewDictEntry(*dict.get(), args[i], args[i + 1]);
      for (int32_t i = 1; i < n; i += 2) dict.Set(Any(args[i]), Any(args[i + 1]));
    })
    .quick();

/// ferry.DictToMap(dict) -> a Map snapshot of the entries (O(1)).
FERRY_REGISTER_GLOBAL("ferry.DictToMap")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.DictToMap");
      *out = ArgDict(args[0], "ferry.DictToMap").ToMap();
    })
    .quick();

}  // namespace ferry

namespace {
ferry::ListNode* ListFromHandle(FerryObjectHandle list, const char* func) {
  if (list == nullptr) FERRY_THROW(ValueError) << func << ": NULL list";
  ferry::Object* obj = ferry::details::FromHandle(list);
  if (obj->type_index() != kFerryList) {
    FERRY_THROW(TypeError) << func << ": expected ferry.List, got " << obj->GetTypeKey();
  }
  return static_cast<ferry::ListNode*>(obj);
}
}  // namespace

int FerryListGetData(FerryObjectHandle list, int64_t* out_size, const FerryAny** out_data) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_size);
  FERRY_C_API_CHECK_NOT_NULL(out_data);
  const ferry::ListNode* obj = ListFromHandle(list, "FerryListGetData");
  *out_size = static_cast<int64_t>(obj->data.size());
  *out_data = reinterpret_cast<const FerryAny*>(obj->data.get()->begin());
  FERRY_C_API_END();
}

int FerryListAppend(FerryObjectHandle list, const FerryAny* value) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(value);
  ferry::ListNode* node = ListFromHandle(list, "FerryListAppend");
  const auto* item = reinterpret_cast<const ferry::AnyView*>(value);
  ferry::details::CheckNewListItems(*node, item, 1, node->data.size());
  node->data.push_back(ferry::Any(*item));
  FERRY_C_API_END();
}

int FerryListSetItem(FerryObjectHandle list, int64_t index, const FerryAny* value) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(value);
  ferry::ListNode* node = ListFromHandle(list, "FerryListSetItem");
  const auto* item = reinterpret_cast<const ferry::AnyView*>(value);
  ferry::details::CheckNewListItems(*node, item, 1, index);
  node->data.Set(index, ferry::Any(*item));
  FERRY_C_API_END();
}
