/// \file error.cc
/// Error objects, backtraces, and the per-thread raised error of the C ABI.
#include <cxxabi.h>  // __cxa_demangle
#include <dlfcn.h>   // dladdr, to name frames
#include <execinfo.h>  // backtrace

#include <cstdio>   // snprintf
#include <cstdlib>  // getenv, free
#include <new>      // std::bad_alloc
#include <string>

#include "c_api_internal.h"
#include "ferry/error.h"

namespace ferry {

Error::Error(String kind, String message, String backtrace)
    : ObjectRef(make_object<ErrorObj>()) {
  ErrorObj* obj = static_cast<ErrorObj*>(get_mutable());
  obj->what = kind + ": " + message;
  obj->kind = std::move(kind);
  obj->message = std::move(message);
  obj->backtrace = std::move(backtrace);
}

namespace details {
namespace {

bool BacktraceEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("FERRY_BACKTRACE");
    return env == nullptr || std::string(env) != "0";
  }();
  return enabled;
}

std::string Demangle(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

/// This thread's raised error; a real object so that it is released when the thread exits.
thread_local ObjectRef raised_error;

}  // namespace

std::string CaptureBacktrace(int skip) {
  if (!BacktraceEnabled()) return std::string();
  constexpr int kMaxFrames = 64;
  void* frames[kMaxFrames];
  int count = ::backtrace(frames, kMaxFrames);
  std::string out;
  for (int i = skip + 1; i < count; ++i) {
    Dl_info info;
    std::string line = "  ";
    if (dladdr(frames[i], &info) != 0 && info.dli_sname != nullptr) {
      line += Demangle(info.dli_sname);
    } else {
      char addr[32];
      std::snprintf(addr, sizeof(addr), "%p", frames[i]);
      line += addr;
    }
    if (info.dli_fname != nullptr) line += std::string(" in ") + info.dli_fname;
    out += line;
    out += '\n';
  }
  return out;
}

void ErrorBuilder::Throw(const char* kind, const std::string& message, const char* file,
                         int line) {
  std::string backtrace = "  at " + std::string(file) + ":" + std::to_string(line) + "\n";
  backtrace += CaptureBacktrace(2);
  throw Error(kind, message, backtrace);
}

void ThrowError(const char* kind, const char* message) {
  throw Error(kind, message, CaptureBacktrace(1));
}

void ThrowDowncastError(int32_t from_type_index, const char* to_type_key) {
  std::string from = from_type_index == kFerryNone ? "None" : TypeIndexToKey(from_type_index);
  throw Error("TypeError", "Downcast from " + from + " to " + to_type_key + " failed",
              CaptureBacktrace(1));
}

void ThrowRaised() {
  FerryObjectHandle handle = nullptr;
  FerryErrorMoveFromRaised(&handle);
  if (handle == nullptr) {
    throw Error("RuntimeError", "a Ferry C ABI call failed without raising an error");
  }
  ObjectPtr<Object> ptr = ObjectUnsafe::PtrFromOwned<Object>(FromHandle(handle));
  if (!ptr->IsInstance<ErrorObj>()) {
    throw Error("RuntimeError", std::string("a Ferry C ABI call raised a non-error object of type ") +
                                    ptr->GetTypeKey());
  }
  throw Error(std::move(ptr));
}

void SetRaisedFromCurrentException() noexcept {
  try {
    try {
      throw;
    } catch (const Error& e) {
      raised_error = e;
    } catch (const std::bad_alloc&) {
      raised_error = Error("MemoryError", "out of memory", CaptureBacktrace(0));
    } catch (const std::exception& e) {
      raised_error = Error("RuntimeError", e.what(), CaptureBacktrace(0));
    } catch (...) {
      raised_error = Error("RuntimeError", "unknown C++ exception (not derived from std::exception)",
                           CaptureBacktrace(0));
    }
  } catch (...) {
    // Building the error itself failed (out of memory): keep whatever was raised before, and
    // make sure the caller still sees a failure.
    static const Error* const kOutOfMemory = new Error("MemoryError", "out of memory");
    raised_error = *kOutOfMemory;
  }
}

}  // namespace details
}  // namespace ferry

using ferry::details::FromHandle;

int FerryErrorCreate(const char* kind, const char* message, const char* backtrace,
                     FerryObjectHandle* out_error) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(kind);
  FERRY_C_API_CHECK_NOT_NULL(message);
  FERRY_C_API_CHECK_NOT_NULL(out_error);
  ferry::Error error(kind, message, backtrace != nullptr ? backtrace : "");
  *out_error = ferry::details::MoveToHandle(std::move(error));
  FERRY_C_API_END();
}

int FerryErrorGetInfo(FerryObjectHandle error, const char** out_kind, const char** out_message,
                      const char** out_backtrace) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  const ferry::Object* obj = FromHandle(error);
  const auto* err = obj->IsInstance<ferry::ErrorObj>() ? static_cast<const ferry::ErrorObj*>(obj)
                                                       : nullptr;
  if (err == nullptr) {
    FERRY_THROW(TypeError) << "FerryErrorGetInfo: expected ferry.Error, got " << obj->GetTypeKey();
  }
  if (out_kind != nullptr) *out_kind = err->kind.c_str();
  if (out_message != nullptr) *out_message = err->message.c_str();
  if (out_backtrace != nullptr) *out_backtrace = err->backtrace.c_str();
  FERRY_C_API_END();
}

namespace {
ferry::ErrorObj* ErrorFromHandle(FerryObjectHandle error, const char* func) {
  ferry::Object* obj = FromHandle(error);
  if (!obj->IsInstance<ferry::ErrorObj>()) {
    FERRY_THROW(TypeError) << func << ": expected ferry.Error, got " << obj->GetTypeKey();
  }
  return static_cast<ferry::ErrorObj*>(obj);
}
}  // namespace

int FerryErrorSetPayload(FerryObjectHandle error, void* payload, void (*deleter)(void*)) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  ferry::ErrorObj* err = ErrorFromHandle(error, "FerryErrorSetPayload");
  void* old_payload = err->payload;
  void (*old_deleter)(void*) = err->payload_deleter;
  err->payload = payload;
  err->payload_deleter = deleter;
  if (old_deleter != nullptr) old_deleter(old_payload);
  FERRY_C_API_END();
}

int FerryErrorGetPayload(FerryObjectHandle error, void** out_payload, void (**out_deleter)(void*)) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  const ferry::ErrorObj* err = ErrorFromHandle(error, "FerryErrorGetPayload");
  if (out_payload != nullptr) *out_payload = err->payload;
  if (out_deleter != nullptr) *out_deleter = err->payload_deleter;
  FERRY_C_API_END();
}

void FerryErrorSetRaised(FerryObjectHandle error) {
  if (error == nullptr) {
    ferry::details::raised_error = ferry::ObjectRef();
    return;
  }
  ferry::details::raised_error =
      ferry::ObjectRef(ferry::details::ObjectUnsafe::PtrFromRaw<ferry::Object>(FromHandle(error)));
}

void FerryErrorSetRaisedFromCStr(const char* kind, const char* message) {
  try {
    ferry::details::raised_error = ferry::Error(kind != nullptr ? kind : "RuntimeError",
                                                message != nullptr ? message : "");
  } catch (...) {
    ferry::details::SetRaisedFromCurrentException();
  }
}

void FerryErrorMoveFromRaised(FerryObjectHandle* out_error) {
  if (out_error == nullptr) return;
  *out_error = ferry::details::MoveToHandle(std::move(ferry::details::raised_error));
}
