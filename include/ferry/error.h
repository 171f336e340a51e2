/// \file ferry/error.h
/// `Error`: the exception type of Ferry, and an object, so one error can travel through the C ABI
/// and into other languages unchanged. It carries a kind ("ValueError", "TypeError", ...), a
/// message and a backtrace: the return addresses of the throwing thread are captured raw when
/// the error is made (cheap) and turned into function names and file:line only when someone
/// asks (`backtrace()`, `FerryErrorGetFrames`), through a per-address cache.
///
///     FERRY_THROW(ValueError) << "expected a positive size, got " << n;
///     FERRY_CHECK(n > 0) << "size must be positive";
#ifndef FERRY_ERROR_H_
#define FERRY_ERROR_H_

#include <exception>  // std::exception, the second base of Error
#include <sstream>    // the message stream of FERRY_THROW
#include <string>

#include "ferry/object.h"
#include "ferry/string.h"

namespace ferry {

namespace details {
/// The raw frames of an error and, once symbolized, their records (src/error.cc).
struct ErrorTrace;
FERRY_DLL void DeleteErrorTrace(ErrorTrace* trace) noexcept;
/// Runs `deleter(arg)`, a deleter another language handed over (an error's payload deleter, a
/// tensor's owner deleter): now, or later if FerryDeleterSetStackReserve gave it a reserve that
/// the calling thread's stack lacks (src/function.cc).
FERRY_DLL void RunDeleter(void (*deleter)(void*), void* arg) noexcept;
}  // namespace details

/// The data of an Error. `what` caches "kind: message" for std::exception::what().
///
/// `backtrace` is the text form of the backtrace; when `trace` holds captured frames it is
/// filled on first use, so read it through `Error::backtrace()`.
///
/// `payload` is an opaque pointer another language attaches (FerryErrorSetPayload), e.g. the
/// Python exception object a callback raised, so that the same object is raised again when the
/// error returns to that language; `payload_deleter` releases it with the error.
class ErrorObj : public Object {
 public:
  String kind;
  String message;
  String backtrace;
  String what;
  void* payload = nullptr;
  void (*payload_deleter)(void* payload) = nullptr;
  /// Formats the payload's own backtrace (another language's frames) on demand; malloc'ed text.
  char* (*payload_formatter)(void* payload) = nullptr;
  details::ErrorTrace* trace = nullptr;

  ErrorObj() = default;
  ErrorObj(const ErrorObj&) = delete;
  ErrorObj& operator=(const ErrorObj&) = delete;
  ~ErrorObj() {
    if (payload_deleter != nullptr) details::RunDeleter(payload_deleter, payload);
    if (trace != nullptr) details::DeleteErrorTrace(trace);
  }

  static constexpr const char* _type_key = "ferry.Error";
  FERRY_DECLARE_BUILTIN_OBJECT_INFO_(ErrorObj, Object, kFerryError);
};

/// A Ferry error: throw it, catch it as `ferry::Error` or `std::exception`, pass it as an object.
class Error : public ObjectRef, public std::exception {
 public:
  /// Without a backtrace text, the calling thread's frames are captured (raw, symbolized when
  /// first needed), unless the environment sets FERRY_BACKTRACE=0.
  FERRY_DLL Error(String kind, String message, String backtrace = String());

  const String& kind() const { return get()->kind; }
  const String& message() const { return get()->message; }
  /// The backtrace as text, innermost frame first ("  function at file:line in library");
  /// computed on the first call.
  FERRY_DLL const String& backtrace() const;
  /// "kind: message".
  const char* what() const noexcept override { return get()->what.c_str(); }

  FERRY_DEFINE_NOTNULLABLE_OBJECT_REF_METHODS(Error, ObjectRef, ErrorObj);
};

namespace details {
/// The backtrace of the calling thread, innermost frame first, skipping `skip` frames.
/// Empty when the environment sets FERRY_BACKTRACE=0.
FERRY_DLL std::string CaptureBacktrace(int skip);

/// The error kinds that Ferry knows by name and that other languages map to their own builtin
/// exceptions ("ValueError", ..., "InternalError"), NULL-terminated: the one list of them
/// (FerryErrorBuiltinKinds in the C ABI).
FERRY_DLL const char* const* BuiltinErrorKinds() noexcept;

/// Collects the message of FERRY_THROW and throws when the statement ends.
class ErrorBuilder {
 public:
  ErrorBuilder(const char* kind, const char* file, int line)
      : kind_(kind), file_(file), line_(line) {}
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  [[noreturn]] ~ErrorBuilder() noexcept(false) { Throw(kind_, stream_.str(), file_, line_); }
  std::ostringstream& stream() { return stream_; }

 private:
  [[noreturn]] FERRY_DLL static void Throw(const char* kind, const std::string& message,
                                           const char* file, int line);
  const char* kind_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

/// Sets this thread's raised error from the exception being handled; call only in a catch block.
/// A ferry::Error is kept as is, std::bad_alloc becomes a MemoryError, any other exception a
/// RuntimeError.
FERRY_DLL void SetRaisedFromCurrentException() noexcept;

/// Takes this thread's raised error (after a C ABI call returned -1) and throws it.
[[noreturn]] FERRY_DLL void ThrowRaised();
}  // namespace details

/// Throws an Error of the given kind; stream the message into it.
///
///     FERRY_THROW(KeyError) << "no field named '" << name << "'";
#define FERRY_THROW(ErrorKind) \
  ::ferry::details::ErrorBuilder(#ErrorKind, __FILE__, __LINE__).stream()

/// Throws a RuntimeError when `cond` is false. Stays on in release builds: use it for conditions
/// that depend on user input.
#define FERRY_CHECK(cond)   \
  if (FERRY_LIKELY(cond)) { \
  } else                    \
    FERRY_THROW(RuntimeError) << "Check failed: (" #cond ") is false: "

/// Throws an InternalError when an internal invariant is broken: a bug in Ferry, not in the
/// caller. Also on in release builds.
#define FERRY_ICHECK(cond)  \
  if (FERRY_LIKELY(cond)) { \
  } else                    \
    FERRY_THROW(InternalError) << "Internal invariant violated: (" #cond ") is false: "

/// Calls a C ABI function and rethrows its error as a C++ exception.
///
///     FERRY_CHECK_SAFE_CALL(FerryTypeKeyToIndex("ferry.String", &index));
#define FERRY_CHECK_SAFE_CALL(expr)                                   \
  do {                                                                \
    if (FERRY_UNLIKELY((expr) != 0)) ::ferry::details::ThrowRaised(); \
  } while (0)

}  // namespace ferry

#endif  // FERRY_ERROR_H_
