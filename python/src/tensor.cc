/// \file tensor.cc
/// Tensors between Python and Ferry through the DLPack protocol of the Python array API
/// standard: any object with `__dlpack__` (NumPy, PyTorch, JAX, ...) converts to a ferry.Tensor
/// without a copy (the producer's deleter, run when C++ drops the tensor, releases the Python
/// object), and a ferry.Tensor hands itself out through `__dlpack__` capsules.
#include <cstring>  // strcmp

#include "core.h"

namespace ferry_py {
namespace {

constexpr const char* kCapsule = "dltensor";
constexpr const char* kCapsuleUsed = "used_dltensor";
constexpr const char* kCapsuleVersioned = "dltensor_versioned";
constexpr const char* kCapsuleVersionedUsed = "used_dltensor_versioned";

PyObject* g_dlpack_name = nullptr;         // "__dlpack__"
PyObject* g_max_version_kwnames = nullptr;  // ("max_version",)
PyObject* g_max_version = nullptr;          // (1, 1)

int InitNames() {
  if (g_dlpack_name != nullptr) return 0;
  g_dlpack_name = PyUnicode_InternFromString("__dlpack__");
  g_max_version_kwnames = Py_BuildValue("(s)", "max_version");
  g_max_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  return g_dlpack_name != nullptr && g_max_version_kwnames != nullptr && g_max_version != nullptr
             ? 0
             : -1;
}

/// Calls `value.__dlpack__(max_version=(1, 1))`, or `value.__dlpack__()` for producers that
/// predate the keyword (they raise TypeError for it).
PyObject* CallDLPack(PyObject* value, PyObject* method) {
  PyObject* args[] = {value, g_max_version};
  PyObject* capsule = PyObject_Vectorcall(method, args, 1, g_max_version_kwnames);
  if (capsule != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return capsule;
  PyErr_Clear();
  return PyObject_CallOneArg(method, value);
}

/// Turns a DLPack capsule into a Tensor handle (new reference), marking the capsule used.
FerryObjectHandle TensorFromCapsule(PyObject* capsule, PyObject* producer) {
  FerryObjectHandle tensor = nullptr;
  if (PyCapsule_IsValid(capsule, kCapsuleVersioned)) {
    auto* managed =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kCapsuleVersioned));
    if (FerryTensorFromDLPackVersioned(managed, &tensor) != 0) {
      RaiseFerryError();
      return nullptr;
    }
    PyCapsule_SetName(capsule, kCapsuleVersionedUsed);
    return tensor;
  }
  if (PyCapsule_IsValid(capsule, kCapsule)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (FerryTensorFromDLPack(managed, &tensor) != 0) {
      RaiseFerryError();
      return nullptr;
    }
    PyCapsule_SetName(capsule, kCapsuleUsed);
    return tensor;
  }
  PyErr_Format(PyExc_TypeError,
               "%s.__dlpack__() returned %s, not an unused DLPack capsule ('dltensor' or "
               "'dltensor_versioned')",
               Py_TYPE(producer)->tp_name, Py_TYPE(capsule)->tp_name);
  return nullptr;
}

/// `value.__dlpack__` made a Tensor (new reference); NULL with an exception.
FerryObjectHandle TensorFromProducer(PyObject* value, PyObject* method) {
  PyObject* capsule = CallDLPack(value, method);
  if (capsule == nullptr) return nullptr;
  FerryObjectHandle tensor = TensorFromCapsule(capsule, value);
  Py_DECREF(capsule);  // a used capsule no longer deletes the tensor
  return tensor;
}

// ---------------------------------------------------------------------------------------------
// Handing a ferry.Tensor out.

void DeleteUnusedCapsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleVersioned)) {
    auto* m =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kCapsuleVersioned));
    if (m->deleter != nullptr) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, kCapsule)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (m->deleter != nullptr) m->deleter(m);
  }
  // A used capsule belongs to its consumer. The checks above may not leave an error behind.
  PyErr_Clear();
}

/// The tensor handle of a ferry.Tensor wrapper, or NULL with a TypeError.
FerryObjectHandle TensorHandleOf(PyObject* obj) {
  if (!IsFerryObject(obj) || HandleOf(obj) == nullptr || TypeIndexOf(HandleOf(obj)) != kFerryTensor) {
    PyErr_Format(PyExc_TypeError, "expected a ferry.Tensor, got %s", Py_TYPE(obj)->tp_name);
    return nullptr;
  }
  return HandleOf(obj);
}

inline const DLTensor& DLOf(FerryObjectHandle h) {
  return static_cast<const FerryTensorObject*>(h)->dl_tensor;
}

/// _tensor_to_dlpack(tensor, stream, max_version, dl_device, copy) -> capsule.
PyObject* TensorToDLPack(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "_tensor_to_dlpack takes 5 arguments");
    return nullptr;
  }
  FerryObjectHandle h = TensorHandleOf(args[0]);
  if (h == nullptr) return nullptr;
  const DLTensor& dl = DLOf(h);
  PyObject* stream = args[1];
  PyObject* max_version = args[2];
  PyObject* dl_device = args[3];
  PyObject* copy = args[4];
  if (stream != Py_None && dl.device.device_type == kDLCPU) {
    PyErr_SetString(PyExc_ValueError,
                    "__dlpack__: stream must be None for a CPU tensor (there is no stream to "
                    "synchronize with)");
    return nullptr;
  }
  if (dl_device != Py_None) {
    int type = 0, id = 0;
    if (!PyArg_ParseTuple(dl_device, "ii;__dlpack__: dl_device must be (device_type, device_id)",
                          &type, &id)) {
      return nullptr;
    }
    if (type != dl.device.device_type || id != dl.device.device_id) {
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: the tensor lives on device (%d, %d) and Ferry does not copy it to "
                   "(%d, %d)",
                   static_cast<int>(dl.device.device_type), static_cast<int>(dl.device.device_id),
                   type, id);
      return nullptr;
    }
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError,
                    "__dlpack__: copy=True is not supported: Ferry only shares its tensors");
    return nullptr;
  }
  bool versioned = false;
  if (max_version != Py_None) {
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version must be a (major, minor) tuple");
      return nullptr;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) return nullptr;
    versioned = major >= 1;
  }
  if (versioned) {
    DLManagedTensorVersioned* m = nullptr;
    if (FerryTensorToDLPackVersioned(h, &m) != 0) return RaiseFerryError();
    PyObject* capsule = PyCapsule_New(m, kCapsuleVersioned, &DeleteUnusedCapsule);
    if (capsule == nullptr) m->deleter(m);
    return capsule;
  }
  DLManagedTensor* m = nullptr;
  if (FerryTensorToDLPack(h, &m) != 0) {
    PyObject* err = RaiseFerryError();
    // NumPy and the array API standard call a refused export a BufferError.
    if (PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
      PyErr_Format(PyExc_BufferError, "%U", text);
      Py_XDECREF(text);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
    }
    return err;
  }
  PyObject* capsule = PyCapsule_New(m, kCapsule, &DeleteUnusedCapsule);
  if (capsule == nullptr) m->deleter(m);
  return capsule;
}

PyObject* IntTuple(const int64_t* values, int32_t n) {
  PyObject* tuple = PyTuple_New(n);
  if (tuple == nullptr) return nullptr;
  for (int32_t i = 0; i < n; ++i) {
    PyObject* item = PyLong_FromLongLong(values[i]);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  return tuple;
}

PyObject* TensorShape(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  return h == nullptr ? nullptr : IntTuple(DLOf(h).shape, DLOf(h).ndim);
}

PyObject* TensorStrides(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  return h == nullptr ? nullptr : IntTuple(DLOf(h).strides, DLOf(h).ndim);
}

PyObject* TensorDType(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  if (h == nullptr) return nullptr;
  FerryAny cell;
  FerryDataType dtype{DLOf(h).dtype.code, DLOf(h).dtype.bits, DLOf(h).dtype.lanes};
  uint64_t bits = 0;
  std::memcpy(&bits, &dtype, sizeof(dtype));
  SetCell(&cell, kFerryDataType, 0, bits);
  return AnyToPy(cell, false);
}

/// (device_type, device_id), as __dlpack_device__ returns it.
PyObject* TensorDevice(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  if (h == nullptr) return nullptr;
  return Py_BuildValue("(ii)", static_cast<int>(DLOf(h).device.device_type),
                       static_cast<int>(DLOf(h).device.device_id));
}

/// (data address, byte offset, read-only): for tests and the repr of Python users.
PyObject* TensorInfo(PyObject*, PyObject* obj) {
  FerryObjectHandle h = TensorHandleOf(obj);
  if (h == nullptr) return nullptr;
  const bool read_only =
      (static_cast<const FerryTensorObject*>(h)->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return Py_BuildValue("(NKO)", PyLong_FromVoidPtr(DLOf(h).data),
                       static_cast<unsigned long long>(DLOf(h).byte_offset),
                       read_only ? Py_True : Py_False);
}

/// _tensor_from_dlpack(x): x itself when it is a ferry.Tensor, else a Tensor sharing x's memory.
PyObject* TensorFromDLPack(PyObject*, PyObject* obj) {
  if (IsFerryObject(obj) && HandleOf(obj) != nullptr &&
      TypeIndexOf(HandleOf(obj)) == kFerryTensor) {
    return Py_NewRef(obj);
  }
  if (InitNames() != 0) return nullptr;
  PyObject* method = _PyType_Lookup(Py_TYPE(obj), g_dlpack_name);  // borrowed, no error
  if (method == nullptr) {
    return PyErr_Format(PyExc_TypeError,
                        "from_dlpack: %s has no __dlpack__ method (expected an array such as a "
                        "NumPy array or a PyTorch tensor)",
                        Py_TYPE(obj)->tp_name);
  }
  Py_INCREF(method);
  FerryObjectHandle h = TensorFromProducer(obj, method);
  Py_DECREF(method);
  if (h == nullptr) return nullptr;
  return WrapObject(h, /*owned=*/true);
}

PyMethodDef kTensorMethods[] = {
    {"_tensor_to_dlpack",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(TensorToDLPack)), METH_FASTCALL,
     nullptr},
    {"_tensor_from_dlpack", TensorFromDLPack, METH_O, nullptr},
    {"_tensor_shape", TensorShape, METH_O, nullptr},
    {"_tensor_strides", TensorStrides, METH_O, nullptr},
    {"_tensor_dtype", TensorDType, METH_O, nullptr},
    {"_tensor_device", TensorDevice, METH_O, nullptr},
    {"_tensor_info", TensorInfo, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

int DLPackToAny(PyObject* value, FerryAny* out, TempScope* scope) {
  if (g_dlpack_name == nullptr && InitNames() != 0) return -1;
  PyObject* method = _PyType_Lookup(Py_TYPE(value), g_dlpack_name);  // borrowed, no error
  if (method == nullptr) return 1;
  Py_INCREF(method);
  FerryObjectHandle h = TensorFromProducer(value, method);
  Py_DECREF(method);
  if (h == nullptr) return -1;
  scope->Keep(h);
  SetObject(out, h);
  return 0;
}

PyObject* BorrowedDLTensorToPy(void* tensor) {
  FerryObjectHandle h = nullptr;
  if (FerryTensorViewOf(static_cast<const DLTensor*>(tensor), &h) != 0) return RaiseFerryError();
  return WrapObject(h, /*owned=*/true);
}

int AddTensorFunctions(PyObject* module) {
  if (InitNames() != 0) return -1;
  return PyModule_AddFunctions(module, kTensorMethods);
}

}  // namespace ferry_py
