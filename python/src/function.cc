/// \file function.cc
/// `ferry.Function`: calling Ferry functions from Python (vectorcall, arguments converted into
/// cells on the stack, keyword arguments for functions registered with parameter names, the GIL
/// released during C++ calls), and Python callables as Ferry functions (the GIL taken on entry,
/// from any thread).
#include <cxxabi.h>  // abi::__forced_unwind

#include <cctype>   // isalpha: a type key starts with a letter
#include <cstdlib>  // strtol: the argument index of a TypeError
#include <cstring>  // strcmp
#include <new>      // std::bad_alloc
#include <string>
#include <string_view>

#include "core.h"
#include "state.h"

namespace ferry_py {
namespace {

/// How many argument cells live on the stack before a call allocates.
constexpr Py_ssize_t kStackArgs = 8;

/// Calls `callable` with the cells converted into `argv` (room for `num_args`); the GIL is held.
int CallPythonWith(PyObject* callable, const FerryAny* args, int32_t num_args, PyObject** argv,
                   FerryAny* result) {
  int rc = -1;
  int32_t converted = 0;
  for (; converted < num_args; ++converted) {
    const FerryAny& cell = args[converted];  // ints, the commonest, without the general switch
    argv[converted] = cell.type_index == kFerryInt ? PyLong_FromLongLong(cell.v_int64)
                                                   : AnyToPy(cell, /*owned=*/false);
    if (argv[converted] == nullptr) break;
  }
  if (converted == num_args) {
    PyObject* ret = PyObject_Vectorcall(callable, argv, static_cast<size_t>(num_args), nullptr);
    if (ret != nullptr) {
      rc = PyToAnyOwned(ret, result);
      Py_DECREF(ret);
    }
  }
  for (int32_t i = 0; i < converted; ++i) Py_DECREF(argv[i]);
  if (rc != 0) SetFerryErrorFromPython();
  return rc;
}

[[gnu::noinline]] int CallPythonManyArgs(PyObject* callable, const FerryAny* args, int32_t num_args,
                                         FerryAny* result) {
  std::vector<PyObject*> argv(static_cast<size_t>(num_args));
  return CallPythonWith(callable, args, num_args, argv.data(), result);
}

// The handler binds a reference to the forced-unwind exception, which has no C++ object: GCC's
// UndefinedBehaviorSanitizer reports that binding as a null reference, so it is not checked here.
/// Rethrows the exception being handled if it is thread cancellation (in a catch block only).
__attribute__((no_sanitize("undefined"))) void RethrowIfForcedUnwind() {
  try {
    throw;
  } catch (abi::__forced_unwind&) {
    throw;  // thread cancellation must reach the thread's start
  } catch (...) {
  }
}

/// Whether the exception being handled is std::bad_alloc (in a catch block only).
bool IsBadAlloc() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (...) {
    return false;
  }
}

/// A C++ exception on the way (out of memory) becomes the raised Ferry error, so that it cannot
/// unwind past the GIL's release into C++ that expects a status code. Only thread cancellation
/// unwinds out: CPython ends a thread that wants the GIL back after finalization began (inside
/// the callback, around a blocking call) with pthread_exit.
int CallPythonHoldingGil(PyObject* callable, const FerryAny* args, int32_t num_args,
                         FerryAny* result) {
  try {
    if (num_args > kStackArgs) return CallPythonManyArgs(callable, args, num_args, result);
    PyObject* argv[kStackArgs];
    return CallPythonWith(callable, args, num_args, argv, result);
  } catch (...) {
    RethrowIfForcedUnwind();
    PyErr_Clear();
    if (IsBadAlloc()) {
      FerryErrorSetRaisedFromCStr("MemoryError", "out of memory calling a Python callback");
      return -1;
    }
    FerryErrorSetRaisedFromCStr("RuntimeError", "a C++ exception calling a Python callback");
  }
  return -1;
}

/// The C callback of every Function made from a Python callable; `resource` is the callable.
/// Called from any thread. A thread that already holds the GIL (a C++ function called from
/// Python with the GIL kept calling back) goes straight in; any other takes it first.
int CallPython(void* resource, const FerryAny* args, int32_t num_args, FerryAny* result) {
  auto* callable = static_cast<PyObject*>(resource);
  if (ThisThreadHoldsGil()) return CallPythonHoldingGil(callable, args, num_args, result);
  // Once finalization began, PyGILState_Ensure never returns to a thread other than the
  // finalizing one (CPython ends it): fail the call instead. A thread that passes this check
  // just before finalization begins is ended by CPython; that unwinds through Ferry cleanly.
  if (!Py_IsInitialized() || InterpreterIsFinalizing()) {
    FerryErrorSetRaisedFromCStr("RuntimeError",
                                "cannot call a Python callback: the Python interpreter is "
                                "finalizing (exiting)");
    return -1;
  }
  PyGILState_STATE state = PyGILState_Ensure();
  int rc = CallPythonHoldingGil(callable, args, num_args, result);
  PyGILState_Release(state);
  return rc;
}

/// The parameter names of `self` as a tuple, or Py_None; cached. Borrowed.
PyObject* ParamNames(PyFerryFunction* self) {
  if (self->param_names != nullptr) return self->param_names;
  int32_t count = 0;
  const char* const* names = nullptr;
  if (FerryFunctionGetParamNames(self->base.handle, &count, &names) != 0) {
    return RaiseFerryError();
  }
  if (count == 0) {
    self->param_names = Py_NewRef(Py_None);
    return self->param_names;
  }
  self->param_names =
      SequenceOf<false>(count, [names](int32_t i) { return PyUnicode_InternFromString(names[i]); });
  return self->param_names;
}

/// Re-raises the pending conversion error of argument `index` of `self` with the argument (its
/// parameter name if the function has them, else its position) in front. Out of the hot path.
[[gnu::noinline, gnu::cold]] void NameArgError(PyFerryFunction* self, Py_ssize_t index) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* names = ParamNames(self);  // may raise: then it is cleared, the position is used
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  PyObject* prefix = names != nullptr && names != Py_None && index < PyTuple_GET_SIZE(names)
                         ? PyUnicode_FromFormat("argument '%U'", PyTuple_GET_ITEM(names, index))
                         : PyUnicode_FromFormat("argument %zd", index);
  PrefixPendingError(prefix);
  Py_XDECREF(prefix);
}

/// A typed C++ function's TypeError names an argument's C++ type (ThrowArgTypeError,
/// src/function.cc): name the Python type of the argument the caller passed instead.
[[gnu::noinline, gnu::cold]] void NamePassedArgType(PyObject* const* args, Py_ssize_t nargs) {
  std::string message;
  if (!PendingTypeErrorText(&message)) return;
  constexpr std::string_view kPrefix = "Mismatched type on argument ";
  if (message.rfind(kPrefix, 0) != 0) return;
  char* end = nullptr;
  const long index = std::strtol(message.c_str() + kPrefix.size(), &end, 10);
  const size_t at = message.find("`: expected ");
  if (index < 0 || index >= nargs || at == std::string::npos) return;
  RewritePassedType(args[index], message, at + 3);
}

/// Places keyword arguments at their parameters' positions in `order` (size `total`).
int PlaceKeywords(PyFerryFunction* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                  std::vector<PyObject*>* order) {
  PyObject* names = ParamNames(self);
  if (names == nullptr) return -1;
  if (names == Py_None) {
    PyErr_SetString(PyExc_TypeError,
                    "this function takes no keyword arguments: it was registered without "
                    "parameter names (set_body_typed(f, {\"a\", ...}) records them)");
    return -1;
  }
  Py_ssize_t num_params = PyTuple_GET_SIZE(names);
  Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
  if (nargs + nkw > num_params) {
    PyErr_Format(PyExc_TypeError, "function takes %zd arguments but %zd were given", num_params,
                 nargs + nkw);
    return -1;
  }
  order->assign(static_cast<size_t>(num_params), nullptr);
  for (Py_ssize_t i = 0; i < nargs; ++i) (*order)[static_cast<size_t>(i)] = args[i];
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t pos = -1;
    for (Py_ssize_t p = 0; p < num_params; ++p) {
      PyObject* param = PyTuple_GET_ITEM(names, p);
      if (param == key || PyUnicode_Compare(param, key) == 0) {
        pos = p;
        break;
      }
    }
    if (pos < 0) {
      PyErr_Format(PyExc_TypeError, "got an unexpected keyword argument '%U' (parameters: %R)", key,
                   names);
      return -1;
    }
    if ((*order)[static_cast<size_t>(pos)] != nullptr) {
      PyErr_Format(PyExc_TypeError, "got multiple values for argument '%U'", key);
      return -1;
    }
    (*order)[static_cast<size_t>(pos)] = args[nargs + k];
  }
  for (Py_ssize_t p = 0; p < num_params; ++p) {
    if ((*order)[static_cast<size_t>(p)] == nullptr) {
      PyErr_Format(PyExc_TypeError, "missing argument '%U'", PyTuple_GET_ITEM(names, p));
      return -1;
    }
  }
  return 0;
}

/// Converts positional arguments into `cells`; on failure the error names the argument (by its
/// parameter name when the function `self` was registered with them). Bit i of `*wrapped` (of the
/// first 32 arguments) says that args[i] is a wrapper whose object cells[i] holds. With
/// kSlowFirst, args[0] is known to have failed PyToAnyNoting's inline head.
template <bool kSlowFirst = false>
[[gnu::always_inline]] inline int ConvertArgs(PyFerryFunction* self, PyObject* const* args,
                                              Py_ssize_t nargs, FerryAny* cells, TempScope* scope,
                                              uint32_t* wrapped) {
  uint32_t mask = 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    const int rc = kSlowFirst && i == 0 ? PyToAnySlow(args[i], &cells[i], scope)
                                        : PyToAnyNoting(args[i], &cells[i], scope);
    if (rc < 0) {
      NameArgError(self, i);
      return -1;
    }
    if (rc > 0 && i < 32) mask |= 1U << i;
  }
  *wrapped = mask;
  return 0;
}

/// The Python object of a call's result (its reference taken over). An object one of the
/// arguments' wrappers holds (`wrapped`, from ConvertArgs) comes back as that wrapper, without
/// the lookup in the wrapper table: while no object has had two live wrappers
/// (g_wrapper_aliases), the live wrapper holding an object is the table's entry for it.
/// Only for the results OwnedCellToPy wraps as objects (dynamic types; a Function result gets a
/// wrapper of its own). The wrapper's handle is read again: a callback during the call may have
/// given the wrapper another object.
[[gnu::always_inline]] inline PyObject* CallResultToPy(const FerryAny& result,
                                                       PyObject* const* args, uint32_t wrapped) {
  if (result.type_index < kFerryDynamicObjectBegin) return OwnedCellToPy(result);
  if (wrapped != 0 && !g_wrapper_aliases) {
    do {
      PyObject* arg = args[__builtin_ctz(wrapped)];
      if (HandleOf(arg) == result.v_obj) {
        DecRef(result.v_obj);  // the wrapper holds a reference of its own
        return Py_NewRef(arg);
      }
      wrapped &= wrapped - 1;
    } while (wrapped != 0);
  }
  return WrapObject(result.v_obj, true);
}

/// Converts `nargs` positional arguments into `cells` and calls. The GIL is released even when an
/// argument is a Python callable: C++ may call it from threads of its own while this thread
/// waits, and those need the GIL (keeping it would deadlock them). kSlowFirst: as ConvertArgs.
template <bool kSlowFirst = false>
[[gnu::always_inline]] inline PyObject* ConvertAndCall(PyFerryFunction* self, PyObject* const* args,
                                                       Py_ssize_t nargs, FerryAny* cells,
                                                       bool release_gil) {
  TempScope scope;
  uint32_t wrapped = 0;
  if (ConvertArgs<kSlowFirst>(self, args, nargs, cells, &scope, &wrapped) != 0) return nullptr;
  FerryAny result;
  if (CallRaw(self->safe_call, self->base.handle, cells, static_cast<int32_t>(nargs), release_gil,
              &result) != 0) {
    RaiseFerryError();
    NamePassedArgType(args, nargs);
    return nullptr;
  }
  return CallResultToPy(result, args, wrapped);
}

}  // namespace

FerryObjectHandle CallForObject(PyObject* func, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<PyFerryFunction*>(func);
  FerryAny cells[kStackArgs];
  TempScope scope;
  uint32_t wrapped = 0;
  if (ConvertArgs(self, args, nargs, cells, &scope, &wrapped) != 0) return nullptr;
  FerryAny result;
  if (CallRaw(self->safe_call, self->base.handle, cells, static_cast<int32_t>(nargs),
              self->release_gil != 0, &result) != 0) {
    RaiseFerryError();
    NamePassedArgType(args, nargs);
    return nullptr;
  }
  if (result.type_index >= kFerryStaticObjectBegin) return result.v_obj;
  PyObject* got = AnyToPy(result, /*owned=*/true);
  if (got != nullptr) {
    PyErr_Format(PyExc_TypeError, "the constructor returned %R, not a Ferry object", got);
    Py_DECREF(got);
  }
  return nullptr;
}

namespace {

/// The rare cases, out of the hot path: keyword arguments, more than kStackArgs arguments, no
/// handle.
[[gnu::noinline]] PyObject* VectorcallSlow(PyFerryFunction* self, PyObject* const* args,
                                           Py_ssize_t nargs, PyObject* kwnames) {
  if (self->base.handle == nullptr) {
    PyErr_SetString(PyExc_ValueError, "ferry.Function is not initialized");
    return nullptr;
  }
  std::vector<PyObject*> reordered;
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) {
    if (PlaceKeywords(self, args, nargs, kwnames, &reordered) != 0) return nullptr;
    args = reordered.data();
    nargs = static_cast<Py_ssize_t>(reordered.size());
  }
  if (nargs > INT32_MAX) return PyErr_Format(PyExc_OverflowError, "too many arguments");
  std::vector<FerryAny> cells(static_cast<size_t>(nargs < kStackArgs ? kStackArgs : nargs));
  return ConvertAndCall(self, args, nargs, cells.data(), self->release_gil != 0);
}

/// A call with `nargs` positional arguments, 1 to kStackArgs, of a function that has its handle
/// (what FunctionVectorcall checked), its GIL policy fixed at compile time. With kNargs other than
/// 0, `nargs` is kNargs: made for the commonest counts, so that the loops unroll and fewer
/// registers live across the call. kSlowFirst: as ConvertArgs.
template <bool kReleaseGil, Py_ssize_t kNargs, bool kSlowFirst = false>
[[gnu::noinline]] PyObject* VectorcallPositional(PyFerryFunction* self, PyObject* const* args,
                                                 Py_ssize_t nargs) {
  if constexpr (kNargs != 0) nargs = kNargs;
  if (nargs > kStackArgs) __builtin_unreachable();  // bounds the loops: each bit of the mask fits
  FerryAny cells[kNargs != 0 ? kNargs : kStackArgs];
  return ConvertAndCall<kSlowFirst>(self, args, nargs, cells, kReleaseGil);
}

/// A call with one positional argument converted inline into `cell` by FunctionVectorcall (a
/// small int, or a wrapper of the class converted last: `wrapped` is 1): nothing is kept for the
/// call, so there is no scope of temporaries to end, and only the argument and whether it is a
/// wrapper live across the C++ call.
template <bool kReleaseGil>
[[gnu::noinline]] PyObject* VectorcallOne(PyFerryFunction* self, PyObject* const* args,
                                          FerryAny cell, uint32_t wrapped) {
  FerryAny result;
  if (CallRaw(self->safe_call, self->base.handle, &cell, 1, kReleaseGil, &result) != 0) {
    RaiseFerryError();
    NamePassedArgType(args, 1);
    return nullptr;
  }
  return CallResultToPy(result, args, wrapped);
}

/// A cell made in registers, to be passed by value.
inline FerryAny CellOf(int32_t type_index, uint64_t payload) {
  FerryAny cell;
  cell.type_index = type_index;
  cell.small_len = 0;
  cell.v_int64 = static_cast<int64_t>(payload);
  return cell;
}

/// Every call with arguments, keyword arguments or no handle, from FunctionVectorcall. Makes no
/// frame of its own (each way on is a tail call): up to kStackArgs positional arguments go on to
/// the VectorcallOne / VectorcallPositional made for their count, everything else to
/// VectorcallSlow. A single argument that converts inline (PyToAnyNoting's inline head, here)
/// goes to VectorcallOne as a cell, so that the call needs no scope for temporaries.
template <bool kReleaseGil>
[[gnu::noinline]] PyObject* VectorcallWithArgs(PyFerryFunction* self, PyObject* const* args,
                                               size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (__builtin_expect(kwnames == nullptr && self->base.handle != nullptr, 1)) {
    if (nargs == 1) {
      PyObject* arg = args[0];
      int64_t v;
      if (Py_IS_TYPE(arg, &PyLong_Type) && CompactIntValue(arg, &v)) {
        return VectorcallOne<kReleaseGil>(self, args, CellOf(kFerryInt, static_cast<uint64_t>(v)),
                                          0);
      }
      if (IsLastObjectType(Py_TYPE(arg)) && HandleOf(arg) != nullptr) {
        FerryObjectHandle h = HandleOf(arg);
        return VectorcallOne<kReleaseGil>(self, args, CellOf(TypeIndexOf(h), BitsOf(h)), 1);
      }
      return VectorcallPositional<kReleaseGil, 1, /*kSlowFirst=*/true>(self, args, 1);
    }
    if (nargs == 2) return VectorcallPositional<kReleaseGil, 2>(self, args, 2);
    if (__builtin_expect(nargs <= kStackArgs, 1)) {
      return VectorcallPositional<kReleaseGil, 0>(self, args, nargs);
    }
  }
  return VectorcallSlow(self, args, nargs, kwnames);
}

/// The vectorcall entry, one for each GIL policy (SetGilPolicy sets the one a function object
/// uses). A call without arguments (`f()`, the commonest shape of a quick function) is made here
/// directly: no argument cells, no scope for temporaries; with the GIL kept, nothing lives across
/// the C++ call but its result cell, so the frame saves no registers. Everything else goes on to
/// VectorcallWithArgs.
template <bool kReleaseGil>
PyObject* FunctionVectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  auto* self = reinterpret_cast<PyFerryFunction*>(callable);
  FerryObjectHandle handle = self->base.handle;
  if (__builtin_expect(PyVectorcall_NARGS(nargsf) != 0 || kwnames != nullptr || handle == nullptr,
                       0)) {
    return VectorcallWithArgs<kReleaseGil>(self, args, nargsf, kwnames);
  }
  FerryAny result;
  if (CallRaw(self->safe_call, handle, nullptr, 0, kReleaseGil, &result) != 0) {
    return RaiseFerryError();
  }
  return OwnedCellToPy(result);
}

/// Sets whether calls of `self` release the GIL, and the vectorcall entry made for that.
void SetGilPolicy(PyFerryFunction* self, bool release_gil) {
  self->release_gil = release_gil ? 1 : 0;
  self->vectorcall = release_gil ? &FunctionVectorcall<true> : &FunctionVectorcall<false>;
}

PyObject* FunctionNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj == nullptr) return nullptr;
  NoteWrapperMade(obj);
  auto* self = reinterpret_cast<PyFerryFunction*>(obj);
  self->safe_call = &FerryFunctionCall;  // the checked entry until the handle is set
  SetGilPolicy(self, true);
  return obj;
}

int FunctionInit(PyObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError,
                  "ferry.Function cannot be created directly: use ferry.convert(callable), "
                  "ferry.get_global_func(name) or ferry.register_func(name, callable)");
  return -1;
}

void FunctionDealloc(PyObject* obj) {
  PyObject_GC_UnTrack(obj);
  Py_CLEAR(reinterpret_cast<PyFerryFunction*>(obj)->param_names);
  ObjectType.tp_dealloc(obj);
}

/// Python's collector sees through a Function made from a Python callable to that callable
/// while this wrapper alone holds the Function (its count is 1): then the wrapper owns the
/// callable as surely as a closure owns its cells, so `d['f'] = ferry.convert(lambda: d)` is a
/// cycle the collector can free. A Function C++ also holds (a List, a field, the global table,
/// another wrapper) is not visited: the collector would count that reference as internal and
/// could free what C++ still calls. The count cannot rise to 2 behind the collector's back
/// while the wrapper is the only holder: taking another reference needs this handle, and the
/// GIL to read it.
int FunctionTraverse(PyObject* obj, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<PyFerryFunction*>(obj);
  Py_VISIT(self->param_names);
  const FerryObjectHandle handle = self->base.handle;
  if (handle == nullptr ||
      __atomic_load_n(&static_cast<FerryObject*>(handle)->ref_counter, __ATOMIC_ACQUIRE) != 1) {
    return 0;
  }
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  if (FerryFunctionGetCallback(handle, &callback, &resource) != 0) {
    DiscardFerryError();  // not a function: a wrapper never holds one (CheckHandleFits)
    return 0;
  }
  if (callback == &CallPython) Py_VISIT(static_cast<PyObject*>(resource));
  return 0;
}

/// Breaks a cycle the collector found: drops the wrapper's Function (and so, if the wrapper
/// alone held it, the callable). The wrapper stays a valid object: calling it afterwards (a
/// finalizer of the same cycle may) is the ValueError of an uninitialized ferry.Function.
int FunctionClear(PyObject* obj) {
  auto* self = reinterpret_cast<PyFerryFunction*>(obj);
  const FerryObjectHandle handle = self->base.handle;
  if (handle != nullptr) {
    PyObject** slot = g_state.wrappers.Find(handle);  // the identity entry, if it is this one
    if (slot != nullptr && *slot == obj) g_state.wrappers.Erase(handle);
    self->base.handle = nullptr;
    self->safe_call = &FerryFunctionCall;  // as a wrapper made without a handle (FunctionNew)
    SavedError saved;  // the callable's release runs Python code (its closure's destructors)
    DecRef(handle);
  }
  Py_CLEAR(self->param_names);
  return 0;
}

PyObject* GetReleaseGil(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PyFerryFunction*>(self)->release_gil);
}
int SetReleaseGil(PyObject* self, PyObject* value, void*) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete release_gil");
    return -1;
  }
  int truth = PyObject_IsTrue(value);
  if (truth < 0) return -1;
  SetGilPolicy(reinterpret_cast<PyFerryFunction*>(self), truth != 0);
  return 0;
}
PyObject* GetParamNames(PyObject* self, void*) {
  if (HandleOf(self) == nullptr) {
    return PyErr_Format(PyExc_TypeError,
                        "param_names: this %s is not initialized (it holds no function)",
                        Py_TYPE(self)->tp_name);
  }
  PyObject* names = ParamNames(reinterpret_cast<PyFerryFunction*>(self));
  if (names == nullptr) return nullptr;
  return names == Py_None ? PyTuple_New(0) : Py_NewRef(names);
}

/// The registered name of the global function `handle`, "" if it is none (a scan of the
/// registry: pickling is rare). -1 with an exception on failure.
int GlobalNameOf(FerryObjectHandle handle, std::string* out) {
  int32_t count = 0;
  const char* const* names = nullptr;
  if (FerryFunctionListGlobalNames(&count, &names) != 0) {
    RaiseFerryError();
    return -1;
  }
  std::vector<std::string> copy(names, names + count);  // the array lives until the next call
  for (const std::string& name : copy) {
    FerryObjectHandle f = nullptr;
    if (FerryFunctionGetGlobal(name.c_str(), &f) != 0) {
      DiscardFerryError();
      continue;
    }
    bool same = f == handle;
    if (f != nullptr) DecRef(f);
    if (same) {
      *out = name;
      return 0;
    }
  }
  out->clear();
  return 0;
}

/// Pickling: a Function made from a Python callable pickles that callable (and fails as it
/// would); a registered global pickles by its name (with the library that registered it, if
/// one did: docs/distributed.md); any other Function (a C++ lambda never
/// registered) is a pickle.PicklingError saying how to make it picklable.
PyObject* FunctionReduce(PyObject* self, PyObject*) {
  FerryObjectHandle handle = HandleOf(self);
  if (handle == nullptr) {
    return PyErr_Format(PyExc_TypeError, "cannot pickle an uninitialized %s",
                        Py_TYPE(self)->tp_name);
  }
  PyObject* core = PyImport_ImportModule("ferry._core");
  if (core == nullptr) return nullptr;
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  if (FerryFunctionGetCallback(handle, &callback, &resource) != 0) {
    Py_DECREF(core);
    return RaiseFerryError();
  }
  PyObject* result = nullptr;
  std::string name;
  if (callback == &CallPython) {
    // ferry.convert(callable) makes the Function again in the unpickling process.
    PyObject* convert = PyObject_GetAttrString(core, "convert");
    if (convert != nullptr) {
      result = Py_BuildValue("(N(O))", convert, static_cast<PyObject*>(resource));
    }
  } else if (GlobalNameOf(handle, &name) == 0) {
    const char* library = nullptr;
    if (!name.empty() && PickleLibrariesEnabled() &&
        FerryLibraryOfGlobal(name.c_str(), &library) != 0) {
      Py_DECREF(core);
      return RaiseFerryError();
    }
    if (library != nullptr) {
      // Registered by a loaded library: the unpickling process loads it if it lacks the name.
      PyObject* registry = PyImport_ImportModule("ferry.registry");
      PyObject* get =
          registry != nullptr ? PyObject_GetAttrString(registry, "_global_from_library") : nullptr;
      Py_XDECREF(registry);
      if (get != nullptr) result = Py_BuildValue("(N(ss))", get, name.c_str(), library);
    } else if (!name.empty()) {
      PyObject* get = PyObject_GetAttrString(core, "get_global_func");
      if (get != nullptr) result = Py_BuildValue("(N(s))", get, name.c_str());
    } else {
      PyObject* pickle = PyImport_ImportModule("pickle");
      PyObject* error =
          pickle != nullptr ? PyObject_GetAttrString(pickle, "PicklingError") : nullptr;
      if (error != nullptr) {
        PyErr_Format(error,
                     "cannot pickle %R: it is a C++ function that is not registered as a global, "
                     "so another process cannot find it; register it (FERRY_REGISTER_GLOBAL or "
                     "Function::SetGlobal) and pickle the registered function",
                     self);
      }
      Py_XDECREF(error);
      Py_XDECREF(pickle);
    }
  }
  Py_DECREF(core);
  return result;
}

/// What `self` knows about itself, for ferry._function_info: (the name it was made with or None,
/// its parameter types then its result type or None when not known, its parameter names, the
/// global name it is registered under or None, the Python callable it wraps or None). New.
PyObject* Describe(PyObject* self) {
  FerryObjectHandle handle = HandleOf(self);
  if (handle == nullptr) {
    return PyErr_Format(PyExc_TypeError, "this %s is not initialized (it holds no function)",
                        Py_TYPE(self)->tp_name);
  }
  const char* typed_name = nullptr;
  int32_t num_types = 0;
  const char* const* types = nullptr;
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  if (FerryFunctionGetSignature(handle, &typed_name, &num_types, &types) != 0 ||
      FerryFunctionGetCallback(handle, &callback, &resource) != 0) {
    return RaiseFerryError();
  }
  PyObject* type_tuple = nullptr;
  if (num_types > 0) {
    type_tuple = StrSequence(types, num_types);
    if (type_tuple == nullptr) return nullptr;
  } else {
    type_tuple = Py_NewRef(Py_None);
  }
  PyObject* names = ParamNames(reinterpret_cast<PyFerryFunction*>(self));
  std::string global;
  if (names == nullptr || GlobalNameOf(handle, &global) != 0) {
    Py_DECREF(type_tuple);
    return nullptr;
  }
  PyObject* callable = callback == &CallPython ? static_cast<PyObject*>(resource) : Py_None;
  return Py_BuildValue("(zNOzO)", typed_name, type_tuple, names == Py_None ? Py_None : names,
                       global.empty() ? nullptr : global.c_str(), callable);
}

/// Calls `ferry._function_info.<what>(self, Describe(self))`.
PyObject* CallInfo(PyObject* self, const char* what) {
  PyObject* described = Describe(self);
  if (described == nullptr) return nullptr;
  PyObject* module = PyImport_ImportModule("ferry._function_info");
  PyObject* result = nullptr;
  if (module != nullptr) {
    result = PyObject_CallMethod(module, what, "OO", self, described);
    Py_DECREF(module);
  }
  Py_DECREF(described);
  return result;
}

/// `<ferry.Function demo.add(a: int, b: int) -> int>`: the name and signature.
PyObject* FunctionRepr(PyObject* self) {
  if (HandleOf(self) == nullptr) return PyUnicode_FromString("<ferry.Function (uninitialized)>");
  return CallInfo(self, "repr_of");
}

/// `__name__`, `__qualname__`, `__doc__`, `__signature__` (the closure names which), so that
/// `inspect.signature`, `help()` and editors describe the function.
PyObject* GetInfo(PyObject* self, void* closure) {
  return CallInfo(self, static_cast<const char*>(closure));
}

PyMethodDef kFunctionMethods[] = {
    {"__reduce__", FunctionReduce, METH_NOARGS,
     "Pickles a registered global by name and a Python callable's Function as the callable."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kFunctionGetSet[] = {
    {"release_gil", GetReleaseGil, SetReleaseGil,
     "Whether a call releases the GIL while the C++ function runs (default: on, except for "
     "functions made from Python callables and functions registered quick).",
     nullptr},
    {"param_names", GetParamNames, nullptr,
     "The parameter names the function was registered with (empty tuple if none).", nullptr},
    {"__name__", GetInfo, nullptr, "The function's name (the last part of a registered name).",
     const_cast<char*>("name_of")},
    {"__qualname__", GetInfo, nullptr, "The function's full name (the registered name).",
     const_cast<char*>("qualname_of")},
    {"__doc__", GetInfo, nullptr, "What the function does, with its signature.",
     const_cast<char*>("doc_of")},
    {"__signature__", GetInfo, nullptr,
     "The inspect.Signature of a typed C++ function (or of the Python callable wrapped).",
     const_cast<char*>("signature_of")},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

#ifdef FERRY_ABI3_ESTIMATE
/// What a stable-ABI (abi3, 3.10) build must do: the limited API of 3.10 has no vectorcall
/// protocol for a type, so CPython packs the arguments into a tuple and calls tp_call, which
/// reads them back with PyTuple_Size / PyTuple_GetItem (functions, not the macros).
PyObject* FunctionTpCall(PyObject* callable, PyObject* args, PyObject* kwargs) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n > 8 || (kwargs != nullptr && PyDict_Size(kwargs) != 0)) {
    return PyVectorcall_Call(callable, args, kwargs);
  }
  PyObject* stack[8];
  for (Py_ssize_t i = 0; i < n; ++i) stack[i] = PyTuple_GetItem(args, i);
  return reinterpret_cast<PyFerryFunction*>(callable)->vectorcall(callable, stack,
                                                                  static_cast<size_t>(n), nullptr);
}
#endif

PyTypeObject FunctionType = {PyVarObject_HEAD_INIT(nullptr, 0)};

void InitFunctionType() {
  FunctionType.tp_name = "ferry.Function";
  FunctionType.tp_doc =
      "A Ferry function: a C++ function, a registered global, or a Python callable handed to "
      "C++. Call it like any Python function.";
  FunctionType.tp_basicsize = sizeof(PyFerryFunction);
  FunctionType.tp_base = &ObjectType;
#ifdef FERRY_ABI3_ESTIMATE
  FunctionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  FunctionType.tp_call = FunctionTpCall;
#else
  FunctionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC;
  FunctionType.tp_vectorcall_offset = offsetof(PyFerryFunction, vectorcall);
  FunctionType.tp_call = PyVectorcall_Call;
#endif
  FunctionType.tp_dealloc = FunctionDealloc;
  FunctionType.tp_traverse = FunctionTraverse;
  FunctionType.tp_clear = FunctionClear;
  FunctionType.tp_free = PyObject_GC_Del;
  FunctionType.tp_new = FunctionNew;
  FunctionType.tp_init = FunctionInit;
  FunctionType.tp_getset = kFunctionGetSet;
  FunctionType.tp_methods = kFunctionMethods;
  FunctionType.tp_repr = FunctionRepr;
}

int SetFunctionHandleFields(PyObject* obj) {
  auto* self = reinterpret_cast<PyFerryFunction*>(obj);
  FerryObjectHandle handle = self->base.handle;
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  int32_t flags = 0;
  if (FerryFunctionGetCallback(handle, &callback, &resource) != 0 ||
      FerryFunctionGetFlags(handle, &flags) != 0) {
    self->safe_call = &FerryFunctionCall;
    RaiseFerryError();
    return -1;
  }
  // Keep the GIL for functions made from Python callables (they would take it right back) and
  // for functions registered quick.
  SetGilPolicy(self, callback != &CallPython && (flags & kFerryFunctionQuick) == 0);
  Py_CLEAR(self->param_names);
  if (FerryFunctionGetSafeCall(handle, &self->safe_call) != 0) {
    self->safe_call = &FerryFunctionCall;  // calls go through the checked entry
    RaiseFerryError();
    return -1;
  }
  return 0;
}

PyObject* WrapFunction(FerryObjectHandle handle) {
  PyObject* obj = FunctionType.tp_alloc(&FunctionType, 0);
  if (obj == nullptr) {
    DecRef(handle);
    return nullptr;
  }
  NoteWrapperMade(obj);
  auto* self = reinterpret_cast<PyFerryFunction*>(obj);
  self->base.handle = handle;
  SetGilPolicy(self, true);  // until SetFunctionHandleFields reads the function's flags
  self->param_names = nullptr;
  if (SetFunctionHandleFields(obj) != 0) {
    Py_DECREF(obj);
    return nullptr;
  }
  return obj;
}

int FunctionFromCallable(PyObject* callable, FerryObjectHandle* out) {
  Py_INCREF(callable);
  if (FerryFunctionCreate(callable, &CallPython, CallableDeleter(), out) != 0) {
    Py_DECREF(callable);
    RaiseFerryError();
    return -1;
  }
  CountCallableFunction();
  return 0;
}

bool MadeFromCallable(FerryObjectHandle func) {
  FerryFunctionCallback callback = nullptr;
  void* resource = nullptr;
  if (FerryFunctionGetCallback(func, &callback, &resource) != 0) {
    DiscardFerryError();
    return false;
  }
  return callback == &CallPython;
}

int CallReleasingGil(FerryFunctionSafeCall call, FerryObjectHandle func, const FerryAny* args,
                     int32_t n, FerryAny* result) {
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = call(func, args, n, result);
  Py_END_ALLOW_THREADS;
  return rc;
}

PyObject* CallFunction(FerryObjectHandle func, const FerryAny* args, int32_t n, bool release_gil) {
  FerryAny result;
  if (CallRaw(&FerryFunctionCall, func, args, n, release_gil, &result) != 0) {
    return RaiseFerryError();
  }
  return OwnedCellToPy(result);
}

bool PendingTypeErrorText(std::string* out) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return false;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject* args = value != nullptr ? PyObject_GetAttrString(value, "args") : nullptr;
  bool found = false;
  if (args != nullptr && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1 &&
      PyUnicode_Check(PyTuple_GET_ITEM(args, 0))) {
    const char* text = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    if (text != nullptr) {
      *out = text;
      found = true;
    }
  }
  Py_XDECREF(args);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return found;
}

namespace {

/// Element `text` (a decimal index) of the list or tuple `passed`, or NULL. Borrowed.
PyObject* ElementOf(PyObject* passed, const char* text) {
  if (passed == nullptr || !(PyList_Check(passed) || PyTuple_Check(passed))) return nullptr;
  char* end = nullptr;
  const long index = std::strtol(text, &end, 10);
  if (end == text || index < 0 || index >= PySequence_Fast_GET_SIZE(passed)) return nullptr;
  return PySequence_Fast_GET_ITEM(passed, index);
}

/// Renames K in the "expected T but got K" of `*message` at `at` after the Python type of
/// `passed`, then, in a detail "(element N: expected ...)", K of element N after that element.
/// Whether anything was renamed.
bool RenameGot(std::string* message, size_t at, PyObject* passed) {
  constexpr std::string_view kGot = " but got ";
  if (passed == nullptr || message->compare(at, 9, "expected ") != 0) return false;
  const size_t got = message->find(kGot, at);
  if (got == std::string::npos) return false;
  const size_t start = got + kGot.size();
  // Only a type key is renamed: "expected Tuple[int, str] (2 items) but got 3 items" is a count.
  if (start >= message->size() || !std::isalpha(static_cast<unsigned char>((*message)[start]))) {
    return false;
  }
  // K is a type key: it ends at a detail in parentheses, at the end of the detail it is in, or
  // at the end.
  size_t stop = message->find_first_of(" )", start);
  if (stop == std::string::npos) stop = message->size();
  bool renamed = false;
  // A Ferry object is what the message says it is; only a converted value is renamed.
  if (!PyObject_TypeCheck(passed, &ObjectType)) {
    const char* name = Py_TYPE(passed)->tp_name;
    message->replace(start, stop - start, name);
    stop = start + std::strlen(name);
    renamed = true;
  }
  constexpr std::string_view kElement = " (element ";
  if (message->compare(stop, kElement.size(), kElement) == 0) {
    const size_t colon = message->find(": ", stop);
    PyObject* element = ElementOf(passed, message->c_str() + stop + kElement.size());
    if (colon != std::string::npos && element != nullptr) {
      renamed = RenameGot(message, colon + 2, element) || renamed;
    }
  }
  return renamed;
}

}  // namespace

void RewritePassedType(PyObject* passed, std::string message, size_t expected_at) {
  if (!RenameGot(&message, expected_at, passed)) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* replaced = value != nullptr ? Py_BuildValue("(s)", message.c_str()) : nullptr;
  if (replaced == nullptr || PyObject_SetAttrString(value, "args", replaced) != 0) PyErr_Clear();
  Py_XDECREF(replaced);
  PyErr_Restore(type, value, tb);
}

void NamePassedFieldType(PyObject* (*find)(PyObject* name, void* context), void* context) {
  std::string message;
  if (!PendingTypeErrorText(&message)) return;
  // "<where>: field 'NAME'[ of 'KEY']: [element N: ...]expected T but got K".
  const size_t open = message.find("field '");
  if (open == std::string::npos) return;
  const size_t name_at = open + 7;
  const size_t close = message.find('\'', name_at);
  if (close == std::string::npos) return;
  size_t colon = message.find(": ", close);
  if (colon == std::string::npos) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);  // `find` runs with no exception pending
  PyObject* name = PyUnicode_FromStringAndSize(message.data() + name_at,
                                               static_cast<Py_ssize_t>(close - name_at));
  PyObject* passed = name != nullptr ? find(name, context) : nullptr;
  Py_XDECREF(name);
  PyErr_Clear();  // a failed lookup leaves the error as it is
  PyErr_Restore(type, value, tb);
  // An element's mismatch ("field 't': element 0: expected int ...") names that element, as a
  // tuple item's does ("field 'p': item 0: item 1: expected int ...").
  constexpr std::string_view kElement = ": element ";
  constexpr std::string_view kItem = ": item ";
  while (passed != nullptr) {
    size_t skip = 0;
    if (message.compare(colon, kElement.size(), kElement) == 0) {
      skip = kElement.size();
    } else if (message.compare(colon, kItem.size(), kItem) == 0) {
      skip = kItem.size();
    } else {
      break;
    }
    passed = ElementOf(passed, message.c_str() + colon + skip);
    colon = message.find(": ", colon + skip);
    if (colon == std::string::npos) return;
  }
  RewritePassedType(passed, std::move(message), colon + 2);
}

}  // namespace ferry_py
