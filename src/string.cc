/// \file string.cc
/// String allocation and the C ABI of strings.
#include <cstring>  // memcpy

#include "c_api_internal.h"
#include "ferry/string.h"

namespace ferry {

// The C ABI promises this layout (FerryStringObject) to readers in other languages: the header,
// then `data` and `size`. (offsetof is not allowed on these classes; tests/c reads a String and
// a Bytes through the struct.)
static_assert(sizeof(StringObj) == sizeof(FerryStringObject), "StringObj is a FerryStringObject");
static_assert(sizeof(BytesObj) == sizeof(FerryStringObject), "BytesObj is a FerryStringObject");

namespace details {
namespace {

/// A StringObj with room for `size` bytes and the NUL; `data` points at the trailing bytes.
ObjectPtr<StringObj> AllocateString(size_t size) {
  ObjectPtr<StringObj> obj = make_inplace_array_object<StringObj, char>(size + 1);
  char* bytes = reinterpret_cast<char*>(obj.get() + 1);
  bytes[size] = '\0';
  obj->data = bytes;
  obj->size = size;
  return obj;
}

}  // namespace

ObjectPtr<Object> MakeString(const char* data, size_t size) {
  if (data == nullptr && size != 0) ThrowError("ValueError", "String: nullptr with non-zero size");
  ObjectPtr<StringObj> obj = AllocateString(size);
  if (size != 0) std::memcpy(const_cast<char*>(obj->data), data, size);
  return obj;
}

ObjectPtr<Object> ConcatString(std::string_view a, std::string_view b) {
  ObjectPtr<StringObj> obj = AllocateString(a.size() + b.size());
  char* bytes = const_cast<char*>(obj->data);
  if (!a.empty()) std::memcpy(bytes, a.data(), a.size());
  if (!b.empty()) std::memcpy(bytes + a.size(), b.data(), b.size());
  return obj;
}

ObjectPtr<Object> MakeBytes(const char* data, size_t size) {
  if (data == nullptr && size != 0) ThrowError("ValueError", "Bytes: nullptr with non-zero size");
  ObjectPtr<BytesObj> obj = make_inplace_array_object<BytesObj, char>(size + 1);
  char* bytes = reinterpret_cast<char*>(obj.get() + 1);
  if (size != 0) std::memcpy(bytes, data, size);
  bytes[size] = '\0';
  obj->data = bytes;
  obj->size = size;
  return obj;
}

const ObjectPtr<Object>& EmptyString() {
  // Never destroyed, so String() stays valid during static destruction.
  static const ObjectPtr<Object>* empty = new ObjectPtr<Object>(AllocateString(0));
  return *empty;
}

}  // namespace details
}  // namespace ferry

int FerryStringCreate(const char* data, size_t size, FerryObjectHandle* out_string) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_string);
  *out_string = ferry::details::MoveToHandle(ferry::String(data, size));
  FERRY_C_API_END();
}

int FerryBytesCreate(const char* data, size_t size, FerryObjectHandle* out_bytes) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(out_bytes);
  *out_bytes = ferry::details::MoveToHandle(ferry::ObjectRef(ferry::details::MakeBytes(data, size)));
  FERRY_C_API_END();
}

int FerryStringGetData(FerryObjectHandle str, const char** out_data, size_t* out_size) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(str);
  const ferry::Object* obj = ferry::details::FromHandle(str);
  if (obj->type_index() != kFerryString && obj->type_index() != kFerryBytes) {
    FERRY_THROW(TypeError) << "FerryStringGetData: expected ferry.String or ferry.Bytes, got "
                           << obj->GetTypeKey();
  }
  static_assert(sizeof(ferry::StringObj) == sizeof(ferry::BytesObj), "same layout");
  const auto* s = static_cast<const ferry::StringObj*>(obj);
  if (out_data != nullptr) *out_data = s->data;
  if (out_size != nullptr) *out_size = static_cast<size_t>(s->size);
  FERRY_C_API_END();
}
