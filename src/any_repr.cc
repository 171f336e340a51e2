/// \file any_repr.cc
/// The short text form of values (AnyRepr): what error messages and Map key errors show of a
/// value, containers cut after a few items and two levels.
#include <iomanip>  // quoted
#include <sstream>  // AnyRepr
#include <string>
#include <vector>  // a Map's live entries

#include "ferry/container/array.h"
#include "ferry/container/map.h"
#include "ferry/container/shape.h"
#include "ferry/dtype.h"
#include "ferry/tensor.h"  // TensorRepr
#include "float_repr_internal.h"

namespace ferry {
namespace details {

namespace {

void Repr(std::ostream& os, const FerryAny* v, int depth);

template <typename It, typename F>
void ReprRange(std::ostream& os, It first, It last, int depth, F each) {
  constexpr int kMaxItems = 8;
  int n = 0;
  for (; first != last; ++first) {
    if (n != 0) os << ", ";
    if (n++ == kMaxItems) {
      os << "...";
      break;
    }
    each(*first, depth);
  }
}

void Repr(std::ostream& os, const FerryAny* v, int depth) {
  std::string_view text;
  if (AnyToStringView(v, &text)) {
    os << std::quoted(text);
    return;
  }
  switch (v->type_index) {
    case kFerryNone:
      os << "None";
      return;
    case kFerryInt:
      os << v->v_int64;
      return;
    case kFerryBool:
      os << (v->v_int64 ? "True" : "False");
      return;
    case kFerryFloat:
      os << FloatRepr(v->v_float64);
      return;
    case kFerryOpaquePtr:
      os << "<void* " << v->v_ptr << ">";
      return;
    case kFerryDLTensorPtr:
      os << "<DLTensor* " << v->v_ptr << ">";
      return;
    case kFerryDataType:
      os << DataType(v->v_dtype);
      return;
    default:
      break;
  }
  if (!IsObjectIndex(v->type_index)) {
    os << "<value of type index " << v->type_index << ">";
    return;
  }
  const Object* obj = ObjectUnsafe::FromHeader(v->v_obj);
  if (v->type_index == kFerryTensor) {
    os << TensorRepr(static_cast<const TensorObj*>(obj));
    return;
  }
  if (depth > 0 && v->type_index == kFerryArray) {
    const auto* array = static_cast<const ArrayObj*>(obj);
    os << "[";
    ReprRange(os, array->begin(), array->end(), depth,
              [&](const Any& cell, int d) { Repr(os, cell.raw(), d - 1); });
    os << "]";
  } else if (depth > 0 && v->type_index == kFerryMap) {
    const auto* map = static_cast<const MapObj*>(obj);
    std::vector<const MapObj::Entry*> live;
    for (const MapObj::Entry* e = map->entries_begin(); e != map->entries_end(); ++e) {
      if (!MapObj::IsErased(*e)) live.push_back(e);
    }
    os << "{";
    ReprRange(os, live.begin(), live.end(), depth, [&](const MapObj::Entry* e, int d) {
      Repr(os, e->key.raw(), d - 1);
      os << ": ";
      Repr(os, e->value.raw(), d - 1);
    });
    os << "}";
  } else if (v->type_index == kFerryShape) {
    os << "Shape" << Shape(ObjectUnsafe::PtrFromRaw<Object>(const_cast<Object*>(obj)));
  } else {
    os << "<" << obj->GetTypeKey() << " at " << static_cast<const void*>(obj) << ">";
  }
}

}  // namespace

std::string AnyRepr(const FerryAny* value) {
  std::ostringstream os;
  Repr(os, value, 2);
  return os.str();
}

std::string DescribeKey(const FerryAny* key) { return "key " + AnyRepr(key); }

}  // namespace details
}  // namespace ferry
