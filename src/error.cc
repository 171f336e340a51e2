/// \file error.cc
/// Error objects, backtraces, and the per-thread raised error of the C ABI.
///
/// A backtrace is captured as raw return addresses when an Error is made (one unwind, no
/// symbol lookup) and symbolized only when someone asks for it. Symbolization goes through GCC's
/// libbacktrace when the build found it (linked statically: no runtime dependency), which reads
/// the DWARF line tables and names static functions, lambdas and inlined frames with their
/// file:line; without it, or for code without debug information, dladdr names the exported
/// symbols. Each address is symbolized once per process (a cache keyed by address).
#include <cxxabi.h>  // __cxa_demangle
#include <dlfcn.h>   // dladdr, to name frames without debug information
#include <link.h>    // dl_iterate_phdr: the libraries a symbolizer state knows
#include <unwind.h>  // _Unwind_Backtrace: the raw capture
#if FERRY_HAVE_LIBBACKTRACE
#include <backtrace.h>  // GCC's libbacktrace (libgcc-dev ships it with g++)
#endif

#include <cstdio>   // snprintf
#include <cstdlib>  // getenv, free
#include <cstring>  // strncmp
#include <mutex>    // the symbolizer's and the lazy text's lock
#include <new>      // std::bad_alloc
#include <set>      // the libraries a libbacktrace state knows
#include <string>
#include <string_view>    // a frame name's deduced return type
#include <unordered_map>  // the per-address cache
#include <vector>

#include "c_api_internal.h"
#include "ferry/error.h"

namespace ferry {
namespace details {

/// The frames of one error: raw addresses from the capture, records once symbolized.
struct ErrorTrace {
  static constexpr int kMaxFrames = 64;
  void* pcs[kMaxFrames];
  int begin = 0;  ///< frames before it belong to the capture machinery
  int end = 0;
  /// FERRY_THROW's __FILE__ and __LINE__. A copy, not the literal: the library that threw may be
  /// unloaded (UnloadLibrary) before the error is formatted.
  std::string throw_file;
  int throw_line = 0;
  bool symbolized = false;
  bool text_done = false;
  std::vector<const std::string*> texts;  ///< the cached text line of each frame
  std::string text_before;                ///< an explicit text the error was made with
  std::vector<FerryErrorFrame> frames;
};

void DeleteErrorTrace(ErrorTrace* trace) noexcept { delete trace; }

const char* const* BuiltinErrorKinds() noexcept {
  static const char* const kKinds[] = {
      "ValueError",     "TypeError",           "KeyError",      "IndexError",
      "AttributeError", "NotImplementedError", "RuntimeError",  "MemoryError",
      "OverflowError",  "ZeroDivisionError",   "InternalError", nullptr,
  };
  return kKinds;
}

namespace {

bool BacktraceEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("FERRY_BACKTRACE");
    return env == nullptr || std::string(env) != "0";
  }();
  return enabled;
}

/// FERRY_BACKTRACE=full keeps the frames of Ferry's own calling and throwing machinery, which
/// traces leave out otherwise (for debugging Ferry itself).
bool BacktraceFull() {
  static const bool full = [] {
    const char* env = std::getenv("FERRY_BACKTRACE");
    return env != nullptr && std::string(env) == "full";
  }();
  return full;
}

std::string Demangle(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

/// Captures the calling thread's return addresses, leaving out this function and `skip` callers.
/// Through libgcc's unwinder directly rather than glibc's backtrace(), which sanitizers
/// intercept with a frame of their own (the count of frames to leave out would then be off).
[[gnu::noinline]] ErrorTrace* CaptureRaw(int skip) {
  if (!BacktraceEnabled()) return nullptr;
  auto* trace = new ErrorTrace();
  _Unwind_Backtrace(
      [](_Unwind_Context* context, void* data) {
        auto* t = static_cast<ErrorTrace*>(data);
        const uintptr_t pc = _Unwind_GetIP(context);
        if (pc == 0 || t->end == ErrorTrace::kMaxFrames) return _URC_END_OF_STACK;
        t->pcs[t->end++] = reinterpret_cast<void*>(pc);
        return _URC_NO_REASON;
      },
      trace);
  // The first frame is this function's.
  trace->begin = skip + 1 < trace->end ? skip + 1 : trace->end;
  return trace;
}

/// One symbolized frame; a return address gives several when calls were inlined into it.
struct SymFrame {
  std::string function;
  std::string file;
  int line = 0;
  std::string library;
  std::string text;  ///< its line of a backtrace text, made once
  /// Whether it is Ferry's throwing machinery (left out at the top of a trace) or calling
  /// machinery (left out anywhere), decided once with its symbols rather than per error.
  bool throw_machinery = false;
  bool call_machinery = false;
};

bool IsThrowMachinery(const std::string& function);
bool IsCallMachinery(const SymFrame& f);

/// The process-wide symbolizer: libbacktrace state (remade when a library was loaded since, as
/// libbacktrace reads the list of libraries once) and the per-address cache. Never destroyed:
/// errors may be formatted during static destruction.
class Symbolizer {
 public:
  static Symbolizer& Get() {
    static Symbolizer* const instance = new Symbolizer();
    return *instance;
  }

  /// The frames at return address `pc`, innermost first. Call with mutex() held; the reference
  /// stays valid for the life of the process.
  const std::vector<SymFrame>& Lookup(uintptr_t pc) {
    auto it = cache_.find(pc);
    if (it != cache_.end()) return it->second;
    std::vector<SymFrame>& out = cache_[pc];
    Dl_info info{};
    const bool found = dladdr(reinterpret_cast<void*>(pc), &info) != 0;
    std::string library = found && info.dli_fname != nullptr ? info.dli_fname : "";
    // A return address points after the call; the call itself is one byte earlier.
    const uintptr_t call = pc - 1;
#if FERRY_HAVE_LIBBACKTRACE
    if (backtrace_state* state = State(found ? info.dli_fbase : nullptr)) {
      backtrace_pcinfo(state, call, &Symbolizer::OnPcInfo, &Symbolizer::OnError, &out);
      // The line tables name a function by its bare DWARF name ("operator()"); the symbol
      // table's mangled name says which one ("f()::{lambda(int)#1}::operator()(int) const").
      // It names the outermost frame of the address, the one not inlined.
      std::string symbol;
      backtrace_syminfo(state, call, &Symbolizer::OnSymInfo, &Symbolizer::OnError, &symbol);
      if (out.empty() || out.back().function.empty()) {
        out.clear();
        if (!symbol.empty()) out.push_back(SymFrame{Demangle(symbol.c_str()), "", 0, "", ""});
      } else if (!symbol.empty()) {
        out.back().function = Demangle(symbol.c_str());
      }
    }
#endif
    if (out.empty() && found && info.dli_sname != nullptr) {
      out.push_back(SymFrame{Demangle(info.dli_sname), "", 0, "", ""});
    }
    if (out.empty()) out.push_back(SymFrame{});
    for (SymFrame& f : out) {
      f.library = library;
      f.text = "  ";
      if (!f.function.empty()) {
        f.text += f.function;
      } else {
        char addr[32];
        std::snprintf(addr, sizeof(addr), "%#zx", static_cast<size_t>(pc));
        f.text += addr;
      }
      if (!f.file.empty()) {  // no line rather than a wrong one (":0") when it is not known
        f.text += " at " + f.file;
        if (f.line > 0) f.text += ":" + std::to_string(f.line);
      }
      if (!library.empty()) f.text += " in " + library;
      f.text += '\n';
      f.throw_machinery = IsThrowMachinery(f.function);
      f.call_machinery = IsCallMachinery(f);
    }
    return out;
  }

  std::mutex& mutex() { return mutex_; }

  /// A copy of `text` that lives as long as the process (a frame record's strings do): the
  /// file names of throw sites, a bounded set. Call with mutex() held.
  const char* Intern(const std::string& text) { return interned_.insert(text).first->c_str(); }

 private:
#if FERRY_HAVE_LIBBACKTRACE
  /// The libbacktrace state to symbolize an address of the library loaded at `base`, or NULL.
  /// libbacktrace reads the list of libraries (and their debug information) once, when a state
  /// is made; a library loaded later gets a new state, made only when one of its addresses is
  /// first looked up (it reads every library again: a load of a library that never appears in
  /// a backtrace costs nothing).
  backtrace_state* State(const void* base) {
    if (state_ != nullptr && known_bases_.count(base) != 0) return state_;
    if (state_ != nullptr && base == nullptr) return state_;
    // libbacktrace has no way to free a state; an old one stays allocated.
    state_ = backtrace_create_state(nullptr, /*threaded=*/1, &Symbolizer::OnError, nullptr);
    known_bases_.clear();
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          // The address of the ELF header, as dladdr reports it in dli_fbase.
          uintptr_t lowest = UINTPTR_MAX;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lowest) {
              lowest = info->dlpi_phdr[i].p_vaddr;
            }
          }
          if (lowest != UINTPTR_MAX) {
            static_cast<std::set<const void*>*>(data)->insert(
                reinterpret_cast<const void*>(info->dlpi_addr + lowest));
          }
          return 0;
        },
        &known_bases_);
    known_bases_.insert(base);  // even if not listed: one new state per library at most
    return state_;
  }

  static int OnPcInfo(void* data, uintptr_t, const char* file, int line, const char* function) {
    auto* out = static_cast<std::vector<SymFrame>*>(data);
    SymFrame f;
    if (function != nullptr) f.function = Demangle(function);
    if (file != nullptr) f.file = file;
    f.line = file != nullptr ? line : 0;
    out->push_back(std::move(f));
    return 0;
  }
  static void OnSymInfo(void* data, uintptr_t, const char* symbol, uintptr_t, uintptr_t) {
    if (symbol != nullptr) *static_cast<std::string*>(data) = symbol;
  }
  static void OnError(void*, const char*, int) {}  // no debug information: dladdr's name

  backtrace_state* state_ = nullptr;
  std::set<const void*> known_bases_;  ///< the libraries state_ knows, by load address
#endif
  std::mutex mutex_;
  std::unordered_map<uintptr_t, std::vector<SymFrame>> cache_;
  std::set<std::string> interned_;
};

bool StartsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

/// Frames of Ferry's throwing machinery that an inlined FERRY_THROW leaves at the top.
bool IsThrowMachinery(const std::string& function) {
  return StartsWith(function, "ferry::details::ErrorBuilder::") ||
         StartsWith(function, "ferry::Error::Error(") ||
         StartsWith(function, "ferry::details::ThrowError(") ||
         StartsWith(function, "ferry::details::ThrowDowncastError(");
}

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/// Whether the demangled `function` is `qualified` (a prefix of a qualified name), maybe after a
/// return type ("int ferry::details::PackedSafeCall<...>(...)").
bool Names(const std::string& function, const char* qualified) {
  // A deduced return type ("decltype(auto) ferry::...(...)", unoptimized builds) opens with a
  // parenthesis of its own: the parameter list is the first one after it.
  constexpr std::string_view kDeduced = "decltype(auto) ";
  const size_t name_at = function.compare(0, kDeduced.size(), kDeduced) == 0 ? kDeduced.size() : 0;
  const size_t at = function.find(qualified, name_at);
  return at != std::string::npos && (at == name_at || function[at - 1] == ' ') &&
         at < function.find('(', name_at);
}

/// Frames of Ferry's calling machinery: the dispatch templates that stand between a caller and
/// the function it calls (the C ABI entry, the typed call's argument conversion, a Function's
/// call operator) and the C++ side of a call into another language's callback. Inlined frames
/// are known by their header, the others (also without debug information) by their names.
bool IsCallMachinery(const SymFrame& f) {
  if (EndsWith(f.file, "/ferry/function.h") ||
      EndsWith(f.file, "/ferry/details/function_traits.h")) {
    return true;
  }
  static const char* const kNames[] = {
      "ferry::details::PackedSafeCall<",
      "ferry::details::PackedFunctionObj<",
      "ferry::details::TypedFunctionObj<",
      "ferry::details::NamedTypedFunctionObj<",
      "ferry::details::TypedCaller<",
      "ferry::details::CallTyped<",
      "ferry::details::UnpackArg<",
      "ferry::details::ThrowUnpackError<",
      "ferry::details::(anonymous namespace)::CallbackFunctionObj::",
      "ferry::FunctionObj::CallPacked",
      "ferry::Function::CallPacked",
      "ferry::Function::operator()",
      "ferry::TypedFunction<",
      "ferry::details::ThrowArgTypeError(",
      "ferry::details::ThrowArgCountError(",
  };
  for (const char* name : kNames) {
    if (Names(f.function, name)) return true;
  }
  return false;
}

/// Fills trace->frames; call with the symbolizer's mutex held.
void Symbolize(ErrorTrace* trace) {
  if (trace->symbolized) return;
  Symbolizer& symbolizer = Symbolizer::Get();
  for (int i = trace->begin; i < trace->end; ++i) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(trace->pcs[i]);
    for (const SymFrame& f : symbolizer.Lookup(pc)) {
      if (!BacktraceFull() && ((trace->frames.empty() && f.throw_machinery) || f.call_machinery)) {
        continue;
      }
      trace->frames.push_back(
          FerryErrorFrame{f.function.c_str(), f.file.c_str(), f.line, f.library.c_str(), pc});
      trace->texts.push_back(&f.text);
    }
  }
  // Code without line tables still gets the throw site's file:line from FERRY_THROW.
  if (!trace->throw_file.empty() && !trace->frames.empty() && trace->frames[0].line == 0) {
    trace->frames[0].file = symbolizer.Intern(trace->throw_file);
    trace->frames[0].line = trace->throw_line;
  }
  trace->symbolized = true;
}

/// "  function at file:line in library" per frame, innermost first.
std::string FormatFrames(const ErrorTrace& trace) {
  size_t size = 0;
  for (const std::string* text : trace.texts) size += text->size();
  std::string out;
  out.reserve(size);
  for (const std::string* text : trace.texts) out += *text;
  return out;
}

/// This thread's raised error; a real object so that it is released when the thread exits.
thread_local ObjectRef raised_error;

ErrorObj* MutableErrorObj(const Error& e) {
  return const_cast<ErrorObj*>(static_cast<const ErrorObj*>(e.get()));
}

/// Leaves out `n` more frames at the top of a fresh error's trace (its maker's own frames).
void DropFrames(const Error& e, int n) {
  ErrorTrace* trace = MutableErrorObj(e)->trace;
  if (trace != nullptr) {
    trace->begin = trace->begin + n < trace->end ? trace->begin + n : trace->end;
  }
}

}  // namespace

/// The frames of an error, symbolized on first use (NULL-safe: an error without a trace).
const std::vector<FerryErrorFrame>* ErrorFrames(const ErrorObj* err) {
  if (err->trace == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(Symbolizer::Get().mutex());
  Symbolize(err->trace);
  return &err->trace->frames;
}

/// The backtrace text of an error, made from its frames (and its payload's) on first use.
const String& ErrorBacktraceText(const ErrorObj* err) {
  ErrorTrace* trace = err->trace;
  if (trace == nullptr) return err->backtrace;
  {
    std::lock_guard<std::mutex> lock(Symbolizer::Get().mutex());
    if (trace->text_done) return err->backtrace;
  }
  // The payload formatter may call into another language (and take its lock): not under ours.
  std::string payload_text;
  if (err->payload_formatter != nullptr) {
    char* text = err->payload_formatter(err->payload);
    if (text != nullptr) {
      payload_text = text;
      std::free(text);
    }
  }
  std::lock_guard<std::mutex> lock(Symbolizer::Get().mutex());
  if (!trace->text_done) {
    Symbolize(trace);
    std::string text = trace->text_before;
    if (!trace->throw_file.empty()) {
      text += "  at " + trace->throw_file + ":" + std::to_string(trace->throw_line) + "\n";
    }
    text += FormatFrames(*trace);
    text += payload_text;
    const_cast<ErrorObj*>(err)->backtrace = String(text);
    trace->text_done = true;
  }
  return err->backtrace;
}

}  // namespace details

Error::Error(String kind, String message, String backtrace) : ObjectRef(make_object<ErrorObj>()) {
  ErrorObj* obj = static_cast<ErrorObj*>(get_mutable());
  obj->what = kind + ": " + message;
  obj->kind = std::move(kind);
  obj->message = std::move(message);
  if (backtrace.empty()) {
    obj->trace = details::CaptureRaw(1);
  } else {
    obj->backtrace = std::move(backtrace);
  }
}

const String& Error::backtrace() const { return details::ErrorBacktraceText(get()); }

namespace details {

std::string CaptureBacktrace(int skip) {
  ErrorTrace* trace = CaptureRaw(skip + 1);
  if (trace == nullptr) return std::string();
  std::string out;
  {
    std::lock_guard<std::mutex> lock(Symbolizer::Get().mutex());
    Symbolize(trace);
    out = FormatFrames(*trace);
  }
  delete trace;
  return out;
}

void ErrorBuilder::Throw(const char* kind, const std::string& message, const char* file, int line) {
  Error error(kind, message);
  DropFrames(error, 1);
  if (ErrorTrace* trace = MutableErrorObj(error)->trace) {
    trace->throw_file = file;
    trace->throw_line = line;
  }
  throw error;
}

void ThrowError(const char* kind, const char* message) {
  Error error(kind, message);
  DropFrames(error, 1);
  throw error;
}

void ThrowDowncastError(int32_t from_type_index, const char* to_type_key) {
  std::string from = from_type_index == kFerryNone ? "None" : TypeIndexToKey(from_type_index);
  Error error("TypeError", "Downcast from " + from + " to " + to_type_key + " failed");
  DropFrames(error, 1);
  throw error;
}

void ThrowRaised() {
  FerryObjectHandle handle = nullptr;
  FerryErrorMoveFromRaised(&handle);
  if (handle == nullptr) {
    throw Error("RuntimeError", "a Ferry C ABI call failed without raising an error");
  }
  ObjectPtr<Object> ptr = ObjectUnsafe::PtrFromOwned<Object>(FromHandle(handle));
  if (!ptr->IsInstance<ErrorObj>()) {
    throw Error(
        "RuntimeError",
        std::string("a Ferry C ABI call raised a non-error object of type ") + ptr->GetTypeKey());
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
      raised_error = Error("MemoryError", "out of memory");
    } catch (const std::exception& e) {
      raised_error = Error("RuntimeError", e.what());
    } catch (...) {
      raised_error =
          Error("RuntimeError", "unknown C++ exception (not derived from std::exception)");
    }
  } catch (...) {
    // Building the error itself failed (out of memory): keep whatever was raised before, and
    // make sure the caller still sees a failure.
    static const Error* const kOutOfMemory =
        new Error("MemoryError", "out of memory", "  (none: out of memory)\n");
    raised_error = *kOutOfMemory;
  }
}

}  // namespace details
}  // namespace ferry

using ferry::details::FromHandle;

namespace {
const ferry::ErrorObj* ErrorFromHandle(FerryObjectHandle error, const char* func) {
  const ferry::Object* obj = FromHandle(error);
  if (!obj->IsInstance<ferry::ErrorObj>()) {
    FERRY_THROW(TypeError) << func << ": expected ferry.Error, got " << obj->GetTypeKey();
  }
  return static_cast<const ferry::ErrorObj*>(obj);
}
ferry::ErrorObj* MutableErrorFromHandle(FerryObjectHandle error, const char* func) {
  return const_cast<ferry::ErrorObj*>(ErrorFromHandle(error, func));
}
}  // namespace

int FerryErrorCreate(const char* kind, const char* message, const char* backtrace,
                     FerryObjectHandle* out_error) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(kind);
  FERRY_C_API_CHECK_NOT_NULL(message);
  FERRY_C_API_CHECK_NOT_NULL(out_error);
  if (backtrace != nullptr) {
    // An explicit text, even an empty one, is the backtrace: nothing is kept from the capture.
    ferry::Error error(kind, message, backtrace);
    auto* obj = const_cast<ferry::ErrorObj*>(static_cast<const ferry::ErrorObj*>(error.get()));
    ferry::details::DeleteErrorTrace(obj->trace);
    obj->trace = nullptr;
    *out_error = ferry::details::MoveToHandle(std::move(error));
  } else {
    ferry::Error error(kind, message);
    ferry::details::DropFrames(error, 1);
    *out_error = ferry::details::MoveToHandle(std::move(error));
  }
  FERRY_C_API_END();
}

int FerryErrorGetInfo(FerryObjectHandle error, const char** out_kind, const char** out_message,
                      const char** out_backtrace) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  const ferry::ErrorObj* err = ErrorFromHandle(error, "FerryErrorGetInfo");
  // The text first: formatting it may fail, and then nothing is written.
  const char* backtrace =
      out_backtrace != nullptr ? ferry::details::ErrorBacktraceText(err).c_str() : nullptr;
  if (out_kind != nullptr) *out_kind = err->kind.c_str();
  if (out_message != nullptr) *out_message = err->message.c_str();
  if (out_backtrace != nullptr) *out_backtrace = backtrace;
  FERRY_C_API_END();
}

int FerryErrorSetPayload(FerryObjectHandle error, void* payload, void (*deleter)(void*)) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  ferry::ErrorObj* err = MutableErrorFromHandle(error, "FerryErrorSetPayload");
  void* old_payload = err->payload;
  void (*old_deleter)(void*) = err->payload_deleter;
  err->payload = payload;
  err->payload_deleter = deleter;
  err->payload_formatter = nullptr;  // it formatted the old payload
  if (old_deleter != nullptr) ferry::details::RunDeleter(old_deleter, old_payload);
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

int FerryErrorSetPayloadFormatter(FerryObjectHandle error, char* (*format)(void* payload)) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  ferry::ErrorObj* err = MutableErrorFromHandle(error, "FerryErrorSetPayloadFormatter");
  if (err->trace == nullptr) {
    // The text is then made on demand, as for a captured trace: an empty trace keeps the
    // explicit text to put first.
    auto* trace = new ferry::details::ErrorTrace();
    trace->symbolized = true;
    trace->text_before = err->backtrace.c_str();
    err->trace = trace;
  }
  err->payload_formatter = format;
  FERRY_C_API_END();
}

int FerryErrorGetFrames(FerryObjectHandle error, const FerryErrorFrame** out_frames,
                        int32_t* out_num_frames) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(error);
  FERRY_C_API_CHECK_NOT_NULL(out_frames);
  FERRY_C_API_CHECK_NOT_NULL(out_num_frames);
  const ferry::ErrorObj* err = ErrorFromHandle(error, "FerryErrorGetFrames");
  const std::vector<FerryErrorFrame>* frames = ferry::details::ErrorFrames(err);
  *out_frames = frames != nullptr && !frames->empty() ? frames->data() : nullptr;
  *out_num_frames = frames != nullptr ? static_cast<int32_t>(frames->size()) : 0;
  FERRY_C_API_END();
}

const char* const* FerryErrorBuiltinKinds(void) { return ferry::details::BuiltinErrorKinds(); }

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
    ferry::details::raised_error =
        ferry::Error(kind != nullptr ? kind : "RuntimeError", message != nullptr ? message : "");
  } catch (...) {
    ferry::details::SetRaisedFromCurrentException();
  }
}

void FerryErrorMoveFromRaised(FerryObjectHandle* out_error) {
  if (out_error == nullptr) return;
  *out_error = ferry::details::MoveToHandle(std::move(ferry::details::raised_error));
}
