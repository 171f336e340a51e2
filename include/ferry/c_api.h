/// \file ferry/c_api.h
/// The stable C ABI of Ferry: the object header, the value cell, the type-index table and the
/// functions every other language (and every other C++ compiler) uses to talk to libferry.
///
/// This is the only C header of the project; it compiles as C99. No C++ exception ever crosses
/// this boundary. Two rules hold for every function (tests/python/test_source_rules.py checks
/// the first):
///
/// Return values. Every function returns `int`: 0 on success, -1 on failure, the error then
/// kept per thread as an Error object and taken with FerryErrorMoveFromRaised. The exceptions
/// are the four that cannot fail: FerryErrorSetRaised, FerryErrorSetRaisedFromCStr and
/// FerryErrorMoveFromRaised, which move the thread's error itself and return void (raising cannot
/// report an error of its own), and FerryErrorBuiltinKinds, which returns its static table.
///
/// Results. Results come back through `out_*` pointers and the `result` cell of a call; a
/// function overwrites them without releasing what they held, and only when it succeeds. After a
/// success they are owned by the caller when the function says "new reference" or the result is
/// a cell (release a cell with FerryAnyRelease), borrowed otherwise. After a failure they hold
/// what the caller put there, and the caller owns nothing new (tests/c/test_c_results.c fails
/// each function that can fail and checks this). A call's `result` cell is the one result
/// written on failure too: it holds None. FerryFunctionCall sets it to None first; a
/// FerryFunctionSafeCall or FerryFunctionCallback receives it holding None and should leave it
/// None when it fails (what a failing one wrote there is released, not returned).
///
///     int32_t index;
///     if (FerryTypeKeyToIndex("ferry.String", &index) != 0) { /* take the error */ }
#ifndef FERRY_C_API_H_
#define FERRY_C_API_H_

#include <stddef.h>  // size_t
#include <stdint.h>  // fixed-width integers of the ABI structs
#include <string.h>  // strlen: FerryRawStrLength

#include "ferry/dlpack.h"
#include "ferry/version.h"

#if defined(_WIN32)
#if defined(FERRY_EXPORTS)
#define FERRY_DLL __declspec(dllexport)
#else
#define FERRY_DLL __declspec(dllimport)
#endif
#else
#define FERRY_DLL __attribute__((visibility("default")))
#endif

// Anonymous unions are C11; GNU C99 accepts them as an extension that we mark as such.
#if !defined(__cplusplus) && defined(__GNUC__)
#define FERRY_C_EXTENSION __extension__
#else
#define FERRY_C_EXTENSION
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Type indices.
///
/// | range    | what                                                        |
/// |----------|-------------------------------------------------------------|
/// | 0..63    | plain values held directly in a FerryAny (not objects)      |
/// | 64..127  | built-in object types with fixed indices                    |
/// | 128..    | every other registered object type, allocated at first use  |
///
/// Dynamic indices are allocated so that a type with reserved child slots owns the contiguous
/// range [index, index + child_slots] for its descendants.
typedef enum {
  kFerryNone = 0,         ///< None / nullptr.
  kFerryInt = 1,          ///< int64_t in v_int64.
  kFerryBool = 2,         ///< bool in v_int64 (0 or 1).
  kFerryFloat = 3,        ///< double in v_float64.
  kFerryOpaquePtr = 4,    ///< void* in v_ptr, not owned.
  kFerryDataType = 5,     ///< FerryDataType in v_dtype.
  kFerryRawStr = 6,       ///< const char* in v_c_str, borrowed, NUL-terminated, never NULL;
                          ///< its length in small_len, or 0 when the producer did not count it.
  kFerrySmallStr = 7,     ///< up to 7 bytes inline in v_bytes, length (<= 7) in small_len.
  kFerryDLTensorPtr = 8,  ///< DLTensor* in v_ptr, borrowed: valid for the call only;
                          ///< small_len 1 when the memory is read-only (a const DLTensor*).
  kFerryStaticObjectBegin = 64,
  kFerryObject = 64,    ///< the root of all objects.
  kFerryString = 65,    ///< ferry.String
  kFerryError = 66,     ///< ferry.Error
  kFerryFunction = 67,  ///< ferry.Function
  kFerryArray = 68,     ///< ferry.Array
  kFerryMap = 69,       ///< ferry.Map
  kFerryShape = 70,     ///< ferry.Shape
  kFerryBytes = 71,     ///< ferry.Bytes (a byte string, Python's `bytes`)
  kFerryTensor = 72,    ///< ferry.Tensor (FerryTensorObject)
  kFerryList = 73,      ///< ferry.List (mutable, shared by every holder)
  kFerryDict = 74,      ///< ferry.Dict (mutable, shared by every holder)
  kFerryStaticObjectEnd = 128,
  kFerryDynamicObjectBegin = 128,
} FerryTypeIndex;

/// An object pointer as other languages hold it. It always points at a FerryObject header.
typedef void* FerryObjectHandle;

/// The header every object starts with: 16 bytes.
///
/// `ref_counter` is an atomic strong count (relaxed increment, acq_rel decrement);
/// `deleter` destroys the object and frees its memory when the count reaches zero.
typedef struct FerryObject {
  uint32_t ref_counter;
  int32_t type_index;
  void (*deleter)(struct FerryObject* self);
} FerryObject;

/// The layout of ferry.String and ferry.Bytes objects: the header, then `size` bytes at `data`
/// followed by a NUL. The bytes live as long as the object and never change. Reading the fields
/// directly is what FerryStringGetData does (after checking the type index), without the call.
typedef struct {
  FerryObject header;
  const char* data;
  uint64_t size;
} FerryStringObject;

/// The layout of a ferry.Tensor object: the header, then the DLTensor it describes (shape and
/// strides always set; strides computed when the producer gave none) and its
/// DLPACK_FLAG_BITMASK_* flags (read-only). Reading them directly is what a frontend does to
/// hand the tensor on, without a call.
typedef struct {
  FerryObject header;
  DLTensor dl_tensor;
  uint64_t flags;
} FerryTensorObject;

/// A data type: type code, bits per lane, lanes (the DLPack layout).
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} FerryDataType;

/// Type codes of FerryDataType.
typedef enum {
  kFerryDTypeInt = 0,
  kFerryDTypeUInt = 1,
  kFerryDTypeFloat = 2,
  kFerryDTypeHandle = 3,
  kFerryDTypeBFloat = 4,
  kFerryDTypeComplex = 5,  ///< DLPack's kDLComplex: "complex64" is two float32.
  kFerryDTypeBool = 6,     ///< DLPack's kDLBool, a byte each: "bool8" (NumPy's bool).
} FerryDataTypeCode;

/// The value cell: 16 bytes. Arguments travel as `const FerryAny*` plus a count.
typedef struct {
  int32_t type_index;
  /// Small payload: the length of a kFerrySmallStr; the length of a kFerryRawStr, or 0 when
  /// not given (a consumer then reads up to the NUL); 0 for every other kind.
  uint32_t small_len;
  FERRY_C_EXTENSION union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    FerryObject* v_obj;
    const char* v_c_str;
    FerryDataType v_dtype;
    char v_bytes[8];
  };
} FerryAny;

/// What the registry knows of one type.
typedef struct {
  int32_t type_index;
  /// Depth in the hierarchy: 0 for Object, 1 for its direct children, ...
  int32_t type_depth;
  /// The type key, e.g. "ferry.String"; valid for the life of the process.
  const char* type_key;
  /// type_ancestors[d] is the index of the ancestor at depth d, for d < type_depth.
  const int32_t* type_ancestors;
  /// Number of reserved child slots and whether children may overflow them.
  int32_t num_child_slots;
  int32_t child_slots_can_overflow;
} FerryTypeInfo;

// ---------------------------------------------------------------------------------------------
// Objects and the type registry.

/// Adds one strong reference to `obj`.
FERRY_DLL int FerryObjectIncRef(FerryObjectHandle obj);
/// Drops one strong reference; the last one destroys the object.
FERRY_DLL int FerryObjectDecRef(FerryObjectHandle obj);

#if defined(__GNUC__) || defined(__clang__)
/// FerryObjectIncRef inline, for frontends that count on every conversion: the header's
/// protocol, relaxed increment. The C++ object model counts through these too, so the two
/// cannot drift apart.
static inline void FerryObjectIncRefInline(FerryObjectHandle obj) {
  __atomic_fetch_add(&((FerryObject*)obj)->ref_counter, 1, __ATOMIC_RELAXED);
}
/// FerryObjectDecRef inline: one acq_rel decrement, the deleter when it took the count to zero
/// (the acquire half orders the free after every other owner's release). One locked
/// instruction and no load of the count before it: a copy and drop is 9 instructions, not 12,
/// and up to 1.1x faster (docs/benchmarks.md, "ObjectRef release").
static inline void FerryObjectDecRefInline(FerryObjectHandle obj) {
  FerryObject* header = (FerryObject*)obj;
  if (__atomic_fetch_sub(&header->ref_counter, 1, __ATOMIC_ACQ_REL) == 1) {
    header->deleter(header);
  }
}
#else
static inline void FerryObjectIncRefInline(FerryObjectHandle obj) { FerryObjectIncRef(obj); }
static inline void FerryObjectDecRefInline(FerryObjectHandle obj) { FerryObjectDecRef(obj); }
#endif

/// The length of the kFerryRawStr in `cell`: the one its producer put in small_len, else (0)
/// counted up to the NUL. Every reader of a borrowed string takes its length from here.
static inline size_t FerryRawStrLength(const FerryAny* cell) {
  return cell->small_len != 0 ? (size_t)cell->small_len : strlen(cell->v_c_str);
}

/// Finds the index of a registered type key; an unknown key is a KeyError.
FERRY_DLL int FerryTypeKeyToIndex(const char* type_key, int32_t* out_type_index);
/// Finds the key of a registered type index; an unknown index is an IndexError.
FERRY_DLL int FerryTypeIndexToKey(int32_t type_index, const char** out_type_key);
/// Gets the index of `type_key`, registering it at first use.
///
/// `static_type_index` is -1 for a dynamically allocated index. The new type reserves
/// `num_child_slots` indices right after its own for its descendants; when the parent's
/// reserved slots are used up the type takes an index past them if the parent allows
/// overflow, else the call fails with a RuntimeError naming both types. Registering a known key
/// with another parent is a RuntimeError.
FERRY_DLL int FerryTypeGetOrAllocIndex(const char* type_key, int32_t static_type_index,
                                       int32_t parent_type_index, int32_t num_child_slots,
                                       int32_t child_slots_can_overflow, int32_t* out_type_index);
/// Gets the registry's record of a type; valid for the life of the process.
FERRY_DLL int FerryTypeGetInfo(int32_t type_index, const FerryTypeInfo** out_info);

/// One field of a type registered at run time (FerryTypeRegisterWithFields).
typedef struct {
  const char* name;
  /// The field's type as text: `int`, `float`, `bool`, `str`, `bytes`, `dtype`, `Any`,
  /// `Function`, `Object`, a type key (`demo.Point`, may name the type being registered),
  /// `Optional[T]`, `Array[T]`, `Map[K, V]`, `List[T]`, `Dict[K, V]`.
  const char* type;
  /// FerryFieldFlag bits.
  int32_t flags;
} FerryFieldSpec;

/// Flags of a FerryFieldSpec.
typedef enum {
  kFerryFieldNoCompare = 1,  ///< structural equality and hashing skip the field
  kFerryFieldNoRepr = 2,     ///< the text form (Repr) leaves the field out
} FerryFieldFlag;

/// Flags of FerryTypeRegisterWithFields.
typedef enum {
  kFerryTypeFinal = 1,   ///< no type may derive from it
  kFerryTypeFrozen = 2,  ///< its fields are read-only through reflection (else writable)
} FerryTypeFlag;

/// Registers a node type from a field table, at run time (what Python's `ferry.py_class` does):
/// a type `type_key` under `parent_type_index` (ferry.Object, a reflected C++ node type with a
/// default constructor, or another type registered this way) whose objects hold the parent's
/// fields first, then `fields`, in order. Reflection (field access, MakeNode, JSON, structural
/// equality and hashing, Repr) works on it as on a C++ node; it compares field-wise.
/// Registering the same key with the same parent, fields and flags again returns the same
/// index; a key taken otherwise, an unknown or final parent, a duplicate field name or a type
/// text that does not parse is an error naming it.
FERRY_DLL int FerryTypeRegisterWithFields(const char* type_key, int32_t parent_type_index,
                                          int32_t num_child_slots, int32_t flags,
                                          const FerryFieldSpec* fields, int32_t num_fields,
                                          int32_t* out_type_index);
/// Flags of FerryTypeSetFieldDefault.
typedef enum {
  /// The value is a Function of no arguments, called for each object that takes the default
  /// (a fresh list per object, as a Python `default_factory`).
  kFerryDefaultFactory = 1,
} FerryDefaultFlag;

/// Records the default of field `field_name` of a type registered with
/// FerryTypeRegisterWithFields (its own field or an inherited run-time one): the value a field
/// that MakeNode's map or a LoadJSON document leaves out takes, so a document written before
/// the field was added still loads. `value` is kept (a new reference) for the life of the
/// process; with kFerryDefaultFactory it must be a Function, called on each use. A field
/// without a default stays required: left out, it is a ValueError naming it and its type.
/// Setting a field's default again replaces it. A C++ node's defaults are its constructor's,
/// recorded by its own registration (FERRY_REGISTER_FIELD_DEFAULT), so a C++ type is refused
/// here. An unknown type or field, a C++ type, a
/// value the field's type refuses or a factory that is not a Function is an error naming it.
FERRY_DLL int FerryTypeSetFieldDefault(int32_t type_index, const char* field_name,
                                       const FerryAny* value, int32_t flags);
/// Removes every default recorded for a type by FerryTypeSetFieldDefault: its fields are
/// required again, and the values and factories are released here. A frontend calls it, for the
/// types it registered, when its language runtime shuts down, so that defaults holding that
/// language's objects (a Python `default_factory`) are released while it can still free them
/// (ferry._core does at interpreter teardown under FERRY_LEAK_CHECK=1). An unknown index is a
/// ValueError; a type not registered from a field table is a TypeError.
FERRY_DLL int FerryTypeClearFieldDefaults(int32_t type_index);
/// Creates an object of a reflected node type from the values of all its fields, in field
/// order (the parent's first), converting and checking each: a TypeError names the field.
/// `*out` receives a new reference.
FERRY_DLL int FerryObjectCreate(int32_t type_index, const FerryAny* values, int32_t num_values,
                                FerryObjectHandle* out);

// ---------------------------------------------------------------------------------------------
// Values.

/// Parses the text form of a data type ("int64", "float32x4", "bool"); ValueError otherwise.
FERRY_DLL int FerryDataTypeFromString(const char* text, FerryDataType* out_dtype);
/// Prints a data type into a new String object.
FERRY_DLL int FerryDataTypeToString(FerryDataType dtype, FerryObjectHandle* out_string);
/// Creates a String object holding a copy of `size` bytes at `data`.
FERRY_DLL int FerryStringCreate(const char* data, size_t size, FerryObjectHandle* out_string);
/// Creates a Bytes object holding a copy of `size` bytes at `data`.
FERRY_DLL int FerryBytesCreate(const char* data, size_t size, FerryObjectHandle* out_bytes);
/// Reads the bytes of a String or Bytes object; they live as long as the object and end with a
/// NUL.
FERRY_DLL int FerryStringGetData(FerryObjectHandle str, const char** out_data, size_t* out_size);

/// Releases what a cell owns (an object reference) and sets it to None.
FERRY_DLL int FerryAnyRelease(FerryAny* value);

/// Reads one field of an object: `field` is the object handle plus the field's offset.
typedef int (*FerryFieldGetter)(const void* field, FerryAny* out);

/// Finds how to read the field `name` of objects of `obj`'s type: the field lives at
/// `(char*)handle + *out_offset` and `*out_getter` reads it. Lets a frontend cache the pair per
/// type, so a field read is one indirect call. AttributeError when there is no such field.
FERRY_DLL int FerryObjectGetFieldGetter(FerryObjectHandle obj, const char* name,
                                        int64_t* out_offset, FerryFieldGetter* out_getter);

/// Reads the field `name` of a reflected object (FERRY_REGISTER_NODE_TYPE) into `*out`, which
/// the caller releases with FerryAnyRelease; an AttributeError when there is no such field.
FERRY_DLL int FerryObjectGetAttr(FerryObjectHandle obj, const char* name, FerryAny* out);

/// Writes one field of an object from a borrowed cell, converting it: `field` is the object
/// handle plus the field's offset. Returns 0, or -1 with a TypeError/OverflowError raised (the
/// message names the expected and the given type, not the field); the field is unchanged then.
typedef int (*FerryFieldSetter)(void* field, const FerryAny* value);

/// Finds how to write the field `name` of objects of `obj`'s type, as
/// FerryObjectGetFieldGetter does for reads. AttributeError when there is no such field or the
/// type is not mutable (`_type_mutable`), naming the type and the field.
/// `*out_setter` is NULL for a field whose values are checked beyond what its storage converts
/// (a field of a type registered at run time that names a type key or element types): write it
/// with FerryObjectSetAttr.
FERRY_DLL int FerryObjectGetFieldSetter(FerryObjectHandle obj, const char* name,
                                        int64_t* out_offset, FerryFieldSetter* out_setter);

/// Writes the field `name` of an object whose type is declared mutable (`_type_mutable`),
/// converting `*value` (borrowed) as a constructor does. AttributeError for an unknown field or
/// a read-only type, TypeError naming the field for a value that does not convert; the object
/// is unchanged on failure. Every holder of the object sees the write.
FERRY_DLL int FerryObjectSetAttr(FerryObjectHandle obj, const char* name, const FerryAny* value);

/// The cells of an Array: `*out_size` values at `*out_data`, borrowed from the array (valid
/// while it lives and is not mutated). TypeError for any other object.
FERRY_DLL int FerryArrayGetData(FerryObjectHandle array, int64_t* out_size,
                                const FerryAny** out_data);

/// The cells of a List (ferry.List): `*out_size` values at `*out_data`, borrowed from the list
/// and valid until its next write. TypeError for any other object.
FERRY_DLL int FerryListGetData(FerryObjectHandle list, int64_t* out_size,
                               const FerryAny** out_data);
/// Appends a copy of `*value` (borrowed) to a List; every holder sees it.
FERRY_DLL int FerryListAppend(FerryObjectHandle list, const FerryAny* value);
/// Replaces element `index` (0 <= index < size) of a List; IndexError naming index and size.
FERRY_DLL int FerryListSetItem(FerryObjectHandle list, int64_t index, const FerryAny* value);
/// Lists and Dicts are mutated from other languages through the global functions ferry.List,
/// ferry.ListInsert, ferry.ListErase, ferry.ListClear, ferry.ListToArray, ferry.Dict,
/// ferry.DictSize, ferry.DictGetItem, ferry.DictSetItem, ferry.DictErase, ferry.DictCount,
/// ferry.DictClear and ferry.DictToMap (FerryFunctionGetGlobal).

// ---------------------------------------------------------------------------------------------
// Functions.
//
// Arguments are borrowed: the callee must not release them. The result cell arrives holding
// None; the callee stores an owned value there, which the caller releases with FerryAnyRelease.
// After a failure the caller finds None there (the rule "Results" at the top).

/// The C entry point of every Function object: `self` is the function's own handle.
typedef int (*FerryFunctionSafeCall)(void* self, const FerryAny* args, int32_t num_args,
                                     FerryAny* result);
/// A callable from C or another language: `resource` is the pointer given to
/// FerryFunctionCreate. Returns 0, or -1 after FerryErrorSetRaised*.
typedef int (*FerryFunctionCallback)(void* resource, const FerryAny* args, int32_t num_args,
                                     FerryAny* result);

/// Wraps a callback into a Function (new reference). `resource_deleter`, if not NULL, is called
/// with `resource` when the function is destroyed.
FERRY_DLL int FerryFunctionCreate(void* resource, FerryFunctionCallback callback,
                                  void (*resource_deleter)(void* resource),
                                  FerryObjectHandle* out_func);
/// Calls a Function. `*result` is overwritten (not released): None at once, then the owned
/// result on success; it holds None after a failure.
FERRY_DLL int FerryFunctionCall(FerryObjectHandle func, const FerryAny* args, int32_t num_args,
                                FerryAny* result);
/// The entry point FerryFunctionCall calls after checking its arguments. A frontend that calls
/// one function many times may fetch it once and call `safe_call(func, args, n, result)`
/// directly, skipping the checks: `func` must be the Function it came from, `args` valid, and
/// `*result` must hold None.
FERRY_DLL int FerryFunctionGetSafeCall(FerryObjectHandle func, FerryFunctionSafeCall* out_call);
/// The callback and resource of a Function made by FerryFunctionCreate; both NULL for any other
/// Function. A frontend uses it to recognize its own functions.
FERRY_DLL int FerryFunctionGetCallback(FerryObjectHandle func, FerryFunctionCallback* out_callback,
                                       void** out_resource);
/// Makes calls of `func`, a Function made by FerryFunctionCreate, fail with a RuntimeError
/// instead of running its callback while fewer than `bytes` of the calling thread's stack are
/// left (0, the default: no check). For a language whose runtime dies when it runs out of stack
/// on entry to a callback (the JVM aborts on a StackOverflowError thrown by an upcall's adapter):
/// a callback calling itself through C++ without end becomes an error its caller can catch. Its
/// `resource_deleter`, which may need that stack too, is then not run by a release with less than
/// `bytes` left, but by the next call of a function with a reserve that passes its check. Set it
/// before the function is shared. A TypeError for any other Function.
FERRY_DLL int FerryFunctionSetStackReserve(FerryObjectHandle func, size_t bytes);
/// Gives `deleter`, a payload deleter (FerryErrorSetPayload) or owner deleter
/// (FerryTensorFromDLTensor) of a language whose runtime needs stack to enter it, the same
/// guard: a release with fewer than `bytes` of the thread's stack left keeps `deleter(arg)` for
/// the next call of a function with a reserve that passes its check, or the next release of a
/// deleter with a reserve that has its stack (which runs all those kept). Process-wide, by the
/// deleter's address (0 bytes: no check); set it before the deleter is handed over. Up to 16
/// deleters; a RuntimeError past that.
FERRY_DLL int FerryDeleterSetStackReserve(void (*deleter)(void* arg), size_t bytes);
/// The parameter names of a typed function registered with names (`set_body_typed(f, {"a",
/// "b"})`); `*out_count` is 0 when it has none. The array stays valid until the next call of
/// this function on the same thread; the strings as long as the function.
FERRY_DLL int FerryFunctionGetParamNames(FerryObjectHandle func, int32_t* out_count,
                                         const char* const** out_names);
/// The signature of a typed function, for introspection (reprs, Python's `inspect.signature`):
/// `*out_name` the name it was made with (NULL if none); `*out_num_types` the number of its
/// parameters plus one, and `*out_types` their type names followed by the result's ("int",
/// "ferry.String", "None" for void), as conversion errors spell them. `*out_num_types` is 0 and
/// `*out_types` NULL for a function whose types are not known (packed, or made by another
/// language). The array and its strings stay valid until the next call of this function on the
/// same thread; the name as long as the function.
FERRY_DLL int FerryFunctionGetSignature(FerryObjectHandle func, const char** out_name,
                                        int32_t* out_num_types, const char* const** out_types);
/// Flags of a function: hints for callers in other languages.
typedef enum {
  /// The function returns promptly and never waits for another thread, so a caller that holds a
  /// lock other threads need (Python's GIL) may keep it during the call. Set by
  /// `FERRY_REGISTER_GLOBAL(name).quick()`; ferry._core then keeps the GIL for its calls.
  kFerryFunctionQuick = 1,
} FerryFunctionFlag;
/// The flags of a function: a bitwise or of FerryFunctionFlag values, 0 for none.
FERRY_DLL int FerryFunctionGetFlags(FerryObjectHandle func, int32_t* out_flags);
/// Looks up a global function (new reference); `*out_func` is NULL when the name is not taken.
FERRY_DLL int FerryFunctionGetGlobal(const char* name, FerryObjectHandle* out_func);
/// Registers a global function; a taken name is an error unless `override` is non-zero.
FERRY_DLL int FerryFunctionSetGlobal(const char* name, FerryObjectHandle func, int32_t override);
/// Removes a global function; `*out_removed` (may be NULL) tells whether it existed.
FERRY_DLL int FerryFunctionRemoveGlobal(const char* name, int32_t* out_removed);
/// Lists the global names, sorted. The array and strings stay valid until the next call of this
/// function on the same thread.
FERRY_DLL int FerryFunctionListGlobalNames(int32_t* out_count, const char* const** out_names);

// ---------------------------------------------------------------------------------------------
// Tensors (DLPack).
//
// On success a FromDLPack call owns `managed` (its deleter runs exactly once, when the tensor is
// destroyed); on failure (a dtype or device Ferry cannot hold, a major version it does not
// know, an ndim out of range) the caller still owns it.

/// Makes a Tensor (new reference) from an unversioned DLPack tensor, taking ownership.
FERRY_DLL int FerryTensorFromDLPack(DLManagedTensor* managed, FerryObjectHandle* out_tensor);
/// Makes a Tensor from a versioned DLPack tensor, taking ownership; the read-only flag is kept.
FERRY_DLL int FerryTensorFromDLPackVersioned(DLManagedTensorVersioned* managed,
                                             FerryObjectHandle* out_tensor);
/// Hands a tensor out as an unversioned DLPack tensor holding a reference to it; the consumer
/// calls `(*out)->deleter(*out)` once. A read-only tensor is a ValueError (the unversioned
/// struct cannot say so): use FerryTensorToDLPackVersioned.
FERRY_DLL int FerryTensorToDLPack(FerryObjectHandle tensor, DLManagedTensor** out_managed);
/// Hands a tensor out as a versioned DLPack tensor (version 1.1, read-only flag set when the
/// tensor is read-only).
FERRY_DLL int FerryTensorToDLPackVersioned(FerryObjectHandle tensor,
                                           DLManagedTensorVersioned** out_managed);
/// A Tensor (new reference) over memory that `owner` keeps alive: shape and strides are copied
/// from `view` (strides computed when NULL), `flags` are DLPACK_FLAG_BITMASK_* (read-only), and
/// `owner_deleter(owner)` runs exactly once when the tensor is destroyed (if not NULL). How a
/// frontend shares an array of its language without a DLPack hand-over. On failure the caller
/// still owns `owner`.
FERRY_DLL int FerryTensorFromDLTensor(const DLTensor* view, uint64_t flags, void* owner,
                                      void (*owner_deleter)(void* owner),
                                      FerryObjectHandle* out_tensor);
/// The owner and owner_deleter a tensor was made with by FerryTensorFromDLTensor (both NULL for
/// any other tensor): a frontend recognizes its own arrays by the deleter.
FERRY_DLL int FerryTensorGetOwner(FerryObjectHandle tensor, void** out_owner,
                                  void (**out_owner_deleter)(void* owner));
/// A Tensor (new reference) viewing a borrowed DLTensor: shape and strides are copied, the data
/// is not owned and must outlive the tensor (how a frontend hands a kFerryDLTensorPtr argument
/// on to code that wants a Tensor).
FERRY_DLL int FerryTensorViewOf(const DLTensor* tensor, FerryObjectHandle* out_tensor);
/// Allocates a compact tensor (new reference) of `ndim` dimensions `shape`: 64-byte aligned on
/// the CPU, through the allocator registered for other devices.
FERRY_DLL int FerryTensorEmpty(const int64_t* shape, int32_t ndim, FerryDataType dtype,
                               DLDevice device, FerryObjectHandle* out_tensor);

/// Loads a shared library and runs its registrations (FERRY_REGISTER_GLOBAL). A library built
/// against Ferry headers of another ABI (FERRY_ABI_VERSION or a layout fingerprint that
/// differs) is refused before any of its code runs: RuntimeError naming both.
FERRY_DLL int FerryLibraryLoad(const char* path);
/// Unloads a library FerryLibraryLoad loaded (C++ ferry::UnloadLibrary): its globals and type
/// keys are removed at once; it is dlclose-d after the last object or Function it made dies.
FERRY_DLL int FerryLibraryUnload(const char* path);
/// Why FerryLibraryLoad would refuse the library file `path` for its ABI record: *out_problem
/// is a message naming both ABIs (valid until the next call on this thread), or NULL when the
/// record matches or the file has none (a plain C library). Reads the file; runs nothing.
FERRY_DLL int FerryLibraryAbiMismatch(const char* path, const char** out_problem);
/// The library whose FerryLibraryLoad registered the type `type_key`: its path as loaded, made
/// absolute with symbolic links resolved. *out_path is NULL when no library load did (the core,
/// the executable, a library linked or dlopen-ed directly, a type made at run time) or the key
/// is unknown. The string lives as long as the process. Pickles use it to name the libraries
/// their objects need (docs/distributed.md).
FERRY_DLL int FerryLibraryOfTypeKey(const char* type_key, const char** out_path);
/// The same for the global function `name`, as long as it is still the function the library
/// registered (NULL once it was replaced or removed).
FERRY_DLL int FerryLibraryOfGlobal(const char* name, const char** out_path);

// ---------------------------------------------------------------------------------------------
// The leak check (FERRY_LEAK_CHECK=1 in the environment; docs/python.md "Leak check").

/// A part of the leak report that a language frontend adds: called once at exit, after Ferry's
/// own registries let go of their references and before Ferry counts the objects left. It drops
/// the frontend's own process-lifetime references, prints what the frontend itself leaked (its
/// wrappers, say) to stderr, and returns how many such leaks it printed.
typedef int64_t (*FerryLeakCheckReporter)(void);
/// Whether the leak check is on in this process: *out_enabled is 1 or 0.
FERRY_DLL int FerryLeakCheckEnabled(int32_t* out_enabled);
/// Adds `reporter` to the report at exit (reporters run last-added first). Does nothing when
/// the check is off.
FERRY_DLL int FerryLeakCheckAddReporter(FerryLeakCheckReporter reporter);

// ---------------------------------------------------------------------------------------------
// Errors.

/// Creates an Error object (new reference) from a kind ("ValueError"), message and backtrace
/// text; with a NULL backtrace the calling thread's frames are captured (FerryErrorGetFrames).
FERRY_DLL int FerryErrorCreate(const char* kind, const char* message, const char* backtrace,
                               FerryObjectHandle* out_error);
/// Reads the parts of an Error; the strings live as long as the error object.
FERRY_DLL int FerryErrorGetInfo(FerryObjectHandle error, const char** out_kind,
                                const char** out_message, const char** out_backtrace);
/// Makes `error` (borrowed; a reference is added) the raised error of this thread.
FERRY_DLL void FerryErrorSetRaised(FerryObjectHandle error);
/// Sets this thread's raised error from parts; for callers that have no Error object at hand.
FERRY_DLL void FerryErrorSetRaisedFromCStr(const char* kind, const char* message);
/// Moves this thread's raised error into `*out_error` (NULL if none) and clears it.
FERRY_DLL void FerryErrorMoveFromRaised(FerryObjectHandle* out_error);
/// Attaches an opaque payload to an Error (replacing and releasing any earlier one); `deleter`,
/// if not NULL, is called with `payload` when the error is destroyed. A language frontend keeps
/// its own exception object here, so that it gets the very same object back.
FERRY_DLL int FerryErrorSetPayload(FerryObjectHandle error, void* payload,
                                   void (*deleter)(void* payload));
/// Reads an Error's payload and its deleter (both NULL when none); the frontend recognizes its
/// own payloads by the deleter.
FERRY_DLL int FerryErrorGetPayload(FerryObjectHandle error, void** out_payload,
                                   void (**out_deleter)(void* payload));
/// Lets an error's backtrace text include its payload's own frames (another language's
/// traceback) without formatting them up front: `format(payload)` is called once, when the
/// text is first needed, and returns a malloc'ed UTF-8 string (or NULL) that the error frees.
FERRY_DLL int FerryErrorSetPayloadFormatter(FerryObjectHandle error,
                                            char* (*format)(void* payload));

/// One C++ frame of an error's backtrace. `function` is demangled ("" when unknown), `file` is
/// the source file ("" without debug information, then `line` is 0), `library` the shared object
/// or executable holding the code, `address` the raw return address. Frames that the compiler
/// inlined into one another have the same address, innermost first.
typedef struct {
  const char* function;
  const char* file;
  int32_t line;
  const char* library;
  uintptr_t address;
} FerryErrorFrame;

/// The C++ frames captured when `error` was made, innermost first, symbolized on the first call
/// (through a per-address cache) and kept with the error; the strings live as long as the
/// process. An error made from a backtrace text (FerryErrorCreate with a non-NULL backtrace)
/// has none. FerryErrorCreate with a NULL backtrace captures the caller's frames.
FERRY_DLL int FerryErrorGetFrames(FerryObjectHandle error, const FerryErrorFrame** out_frames,
                                  int32_t* out_num_frames);

/// The error kinds Ferry knows by name, which language frontends map to their builtin
/// exceptions ("ValueError", "TypeError", ..., "InternalError"): a static NULL-terminated array.
FERRY_DLL const char* const* FerryErrorBuiltinKinds(void);

#ifdef __cplusplus
}  // extern "C"
#endif
#endif  // FERRY_C_API_H_
