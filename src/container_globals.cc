/// \file container_globals.cc
/// The globals that expose Array, Map and Shape to other languages (ferry.Array, ferry.MapKeys,
/// ...) and the C ABI's FerryArrayGetData.
#include "c_api_internal.h"
#include "ferry/container/array.h"
#include "ferry/container/map.h"
#include "ferry/container/shape.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "globals_internal.h"

namespace ferry {

namespace {

const ArrayObj& ArgArray(const AnyView& arg, const char* func) {
  if (const auto* array = arg.as<ArrayObj>()) return *array;
  FERRY_THROW(TypeError) << func << ": expected ferry.Array but got " << arg.GetTypeKey();
}

const MapObj& ArgMap(const AnyView& arg, const char* func) {
  if (const auto* map = arg.as<MapObj>()) return *map;
  FERRY_THROW(TypeError) << func << ": expected ferry.Map but got " << arg.GetTypeKey();
}

}  // namespace

namespace details {
void ThrowGlobalArgCountError(const char* func, int32_t expected, int32_t given) {
  FERRY_THROW(TypeError) << func << "() takes " << expected << " argument"
                         << (expected == 1 ? "" : "s") << " but " << given << " were given";
}
}  // namespace details

using details::CheckArgCount;

/// ferry.Array(*items) -> Array
FERRY_REGISTER_GLOBAL("ferry.Array")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      Array<Any> array;
      array.reserve(n);
      for (int32_t i = 0; i < n; ++i) array.push_back(Any(args[i]));
      *out = std::move(array);
    })
    .quick();

// Every global of this file is registered quick(): each returns promptly and never waits, so
// Python keeps the GIL for them (the constructors, MapKeys, MapItems and ShapeToArray copy, but at
// memory speed).

/// ferry.ArraySize(array) -> int
FERRY_REGISTER_GLOBAL("ferry.ArraySize")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.ArraySize");
      *out = ArgArray(args[0], "ferry.ArraySize").size();
    })
    .quick();

/// ferry.ArrayGetItem(array, index) -> Any; negative indices count from the end.
FERRY_REGISTER_GLOBAL("ferry.ArrayGetItem")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.ArrayGetItem");
      const ArrayObj& array = ArgArray(args[0], "ferry.ArrayGetItem");
      int64_t index = args[1].cast<int64_t>();
      if (index < 0 && index >= -array.size()) index += array.size();
      *out = array.at(index);
    })
    .quick();

/// ferry.Map(key0, value0, key1, value1, ...) -> Map
FERRY_REGISTER_GLOBAL("ferry.Map")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      if (n % 2 != 0) {
        FERRY_THROW(ValueError) << "ferry.Map takes keys and values in pairs, but got " << n
                                << " arguments";
      }
      Map<Any, Any> map;
      map.reserve(static_cast<size_t>(n / 2));
      for (int32_t i = 0; i < n; i += 2) map.Set(Any(args[i]), Any(args[i + 1]));
      *out = std::move(map);
    })
    .quick();

/// ferry.MapSize(map) -> int
FERRY_REGISTER_GLOBAL("ferry.MapSize")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.MapSize");
      *out = ArgMap(args[0], "ferry.MapSize").size();
    })
    .quick();

/// ferry.MapGetItem(map, key) -> Any; KeyError when missing.
FERRY_REGISTER_GLOBAL("ferry.MapGetItem")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.MapGetItem");
      *out = ArgMap(args[0], "ferry.MapGetItem").At(args[1]);
    })
    .quick();

/// ferry.MapCount(map, key) -> int (0 or 1)
FERRY_REGISTER_GLOBAL("ferry.MapCount")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 2, "ferry.MapCount");
      *out = ArgMap(args[0], "ferry.MapCount").Find(args[1]) != nullptr ? 1 : 0;
    })
    .quick();

/// ferry.MapKeys(map) -> Array of the keys, in order.
FERRY_REGISTER_GLOBAL("ferry.MapKeys")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.MapKeys");
      const MapObj& map = ArgMap(args[0], "ferry.MapKeys");
      Array<Any> keys;
      keys.reserve(static_cast<int64_t>(map.size()));
      for (const MapObj::Entry* e = map.entries_begin(); e != map.entries_end(); ++e) {
        if (!MapObj::IsErased(*e)) keys.push_back(e->key);
      }
      *out = std::move(keys);
    })
    .quick();

/// ferry.MapItems(map) -> Array [key0, value0, key1, value1, ...], in order.
FERRY_REGISTER_GLOBAL("ferry.MapItems")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.MapItems");
      const MapObj& map = ArgMap(args[0], "ferry.MapItems");
      Array<Any> items;
      items.reserve(2 * static_cast<int64_t>(map.size()));
      for (const MapObj::Entry* e = map.entries_begin(); e != map.entries_end(); ++e) {
        if (MapObj::IsErased(*e)) continue;
        items.push_back(e->key);
        items.push_back(e->value);
      }
      *out = std::move(items);
    })
    .quick();

/// ferry.Shape(*dims) -> Shape
FERRY_REGISTER_GLOBAL("ferry.Shape")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      std::vector<int64_t> dims(static_cast<size_t>(n));
      for (int32_t i = 0; i < n; ++i) {
        auto dim = args[i].as<int64_t>();
        if (!dim || args[i].type_index() != kFerryInt) {
          FERRY_THROW(TypeError) << "ferry.Shape: dimension " << i << " must be an int, not "
                                 << args[i].GetTypeKey();
        }
        dims[static_cast<size_t>(i)] = *dim;
      }
      *out = Shape(dims);
    })
    .quick();

/// ferry.ShapeToArray(shape) -> Array of ints
FERRY_REGISTER_GLOBAL("ferry.ShapeToArray")
    .set_body([](const AnyView* args, int32_t n, Any* out) {
      CheckArgCount(n, 1, "ferry.ShapeToArray");
      Shape shape = args[0].cast<Shape>();
      *out = Array<int64_t>(shape.begin(), shape.end());
    })
    .quick();

}  // namespace ferry

int FerryArrayGetData(FerryObjectHandle array, int64_t* out_size, const FerryAny** out_data) {
  try {
    if (array == nullptr || out_size == nullptr || out_data == nullptr) {
      FERRY_THROW(ValueError) << "FerryArrayGetData: NULL argument";
    }
    const ferry::Object* obj =
        ferry::details::ObjectUnsafe::FromHeader(static_cast<FerryObject*>(array));
    if (obj->type_index() != kFerryArray) {
      FERRY_THROW(TypeError) << "FerryArrayGetData: expected ferry.Array, got "
                             << obj->GetTypeKey();
    }
    const auto* arr = static_cast<const ferry::ArrayObj*>(obj);
    *out_size = arr->size();
    *out_data = reinterpret_cast<const FerryAny*>(arr->begin());
    return 0;
  } catch (...) {
    FERRY_RETHROW_FORCED_UNWIND();
    ferry::details::SetRaisedFromCurrentException();
    return -1;
  }
}
