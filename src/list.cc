/// \file list.cc
/// List and Dict: their reflection (a node with one field `data`, so structural equality,
/// hashing, JSON and pickle follow the Array or Map inside), the conversions from Array and
/// Map, the globals other languages use, and the C ABI.
#include "ferry/container/list.h"

#include "c_api_internal.h"
#include "ferry/container/dict.h"
#include "ferry/function.h"
#include "ferry/reflection/reflection.h"

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
void CheckArgs(int32_t n, int32_t expected, const char* func) {
  if (n != expected) {
    FERRY_THROW(TypeError) << func << " takes " << expected << " arguments but " << n
                           << " were given";
  }
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
      CheckArgs(n, 3, "ferry.ListInsert");
      ArgList(args[0], "ferry.ListInsert").insert(args[1].cast<int64_t>(), Any(args[2]));
    })
    .quick();

/// ferry.ListErase(list, first, last): removes the elements [first, last).
FERRY_REGISTER_GLOBAL("ferry.ListErase")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgs(n, 3, "ferry.ListErase");
      ArgList(args[0], "ferry.ListErase").erase(args[1].cast<int64_t>(), args[2].cast<int64_t>());
    })
    .quick();

/// ferry.ListClear(list)
FERRY_REGISTER_GLOBAL("ferry.ListClear")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgs(n, 1, "ferry.ListClear");
      ArgList(args[0], "ferry.ListClear").clear();
    })
    .quick();

/// ferry.ListToArray(list) -> an Array snapshot of the elements (O(1)).
FERRY_REGISTER_GLOBAL("ferry.ListToArray")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgs(n, 1, "ferry.ListToArray");
      *out = ArgList(args[0], "ferry.ListToArray").ToArray();
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
      CheckArgs(n, 1, "ferry.DictSize");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictSize").size());
    })
    .quick();

/// ferry.DictGetItem(dict, key) -> the value; KeyError naming the key.
FERRY_REGISTER_GLOBAL("ferry.DictGetItem")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgs(n, 2, "ferry.DictGetItem");
      *out = ArgDict(args[0], "ferry.DictGetItem").at(args[1]);
    })
    .quick();

/// ferry.DictSetItem(dict, key, value)
FERRY_REGISTER_GLOBAL("ferry.DictSetItem")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgs(n, 3, "ferry.DictSetItem");
      ArgDict(args[0], "ferry.DictSetItem").Set(Any(args[1]), Any(args[2]));
    })
    .quick();

/// ferry.DictErase(dict, key) -> how many entries were removed (0 or 1).
FERRY_REGISTER_GLOBAL("ferry.DictErase")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgs(n, 2, "ferry.DictErase");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictErase").erase(args[1]));
    })
    .quick();

/// ferry.DictCount(dict, key) -> 0 or 1.
FERRY_REGISTER_GLOBAL("ferry.DictCount")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgs(n, 2, "ferry.DictCount");
      *out = static_cast<int64_t>(ArgDict(args[0], "ferry.DictCount").count(args[1]));
    })
    .quick();

/// ferry.DictClear(dict)
FERRY_REGISTER_GLOBAL("ferry.DictClear")
    .set_body([](const AnyView* args, int32_t n, Any*) {
      CheckArgs(n, 1, "ferry.DictClear");
      ArgDict(args[0], "ferry.DictClear").clear();
    })
    .quick();

/// ferry.DictToMap(dict) -> a Map snapshot of the entries (O(1)).
FERRY_REGISTER_GLOBAL("ferry.DictToMap")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgs(n, 1, "ferry.DictToMap");
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
  ListFromHandle(list, "FerryListAppend")
      ->data.push_back(ferry::Any(*reinterpret_cast<const ferry::AnyView*>(value)));
  FERRY_C_API_END();
}

int FerryListSetItem(FerryObjectHandle list, int64_t index, const FerryAny* value) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(value);
  ListFromHandle(list, "FerryListSetItem")
      ->data.Set(index, ferry::Any(*reinterpret_cast<const ferry::AnyView*>(value)));
  FERRY_C_API_END();
}
