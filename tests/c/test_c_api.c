/* The C ABI used from plain C99: registry lookups, a new type, strings, data types and errors.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include <ferry/c_api.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"

/* Takes the raised error and checks its kind. */
static void expect_raised(const char* kind) {
  FerryObjectHandle err = NULL;
  const char* got_kind = NULL;
  const char* message = NULL;
  FerryErrorMoveFromRaised(&err);
  EXPECT(err != NULL);
  if (err == NULL) return;
  EXPECT(FerryErrorGetInfo(err, &got_kind, &message, NULL) == 0);
  EXPECT(strcmp(got_kind, kind) == 0);
  EXPECT(message != NULL && message[0] != '\0');
  FerryObjectDecRef(err);
}

/* A C callback turned into a Function: multiplies its one int argument by *resource. */
static int scale(void* resource, const FerryAny* args, int32_t num_args, FerryAny* result) {
  if (num_args != 1 || args[0].type_index != kFerryInt) {
    FerryErrorSetRaisedFromCStr("TypeError", "scale expects one int");
    return -1;
  }
  result->type_index = kFerryInt;
  result->v_int64 = args[0].v_int64 * *(int64_t*)resource;
  return 0;
}

static int resource_deleted = 0;
static void delete_resource(void* resource) {
  (void)resource;
  ++resource_deleted;
}

/* Calls a global with two ints; returns the call's rc and stores the int result. */
static int call_global2(const char* name, int64_t a, int64_t b, int64_t* out) {
  FerryObjectHandle f = NULL;
  FerryAny args[2];
  FerryAny result;
  int rc;
  if (FerryFunctionGetGlobal(name, &f) != 0 || f == NULL) return -2;
  args[0].type_index = kFerryInt;
  args[0].small_len = 0;
  args[0].v_int64 = a;
  args[1] = args[0];
  args[1].v_int64 = b;
  rc = FerryFunctionCall(f, args, 2, &result);
  if (rc == 0) {
    *out = result.type_index == kFerryInt ? result.v_int64 : -999;
    FerryAnyRelease(&result);
  }
  FerryObjectDecRef(f);
  return rc;
}

static void test_functions(const char* module_path) {
  static int64_t factor = 3;
  FerryObjectHandle f = NULL;
  FerryObjectHandle missing = (FerryObjectHandle)&factor;
  FerryAny arg;
  FerryAny result;
  int64_t sum = 0;
  int32_t removed = 0;

  /* A global registered by a C++ library loaded at run time. */
  EXPECT(FerryLibraryLoad(module_path) == 0);
  {
    const char* library = NULL;
    EXPECT(FerryLibraryOfGlobal("testing.module.add", &library) == 0 && library != NULL);
    EXPECT(strstr(library, "good_module.so") != NULL);
    EXPECT(FerryLibraryOfTypeKey("ferry.Array", &library) == 0 && library == NULL);
  }
  EXPECT(call_global2("testing.module.add", 40, 2, &sum) == 0);
  EXPECT(sum == 42);
  EXPECT(call_global2("testing.module.add", 1, 2, &sum) == 0 && sum == 3);
  EXPECT(FerryLibraryLoad("/no/such/library.so") == -1);
  expect_raised("RuntimeError");

  /* A C callback registered as a global and called back through the registry. */
  EXPECT(FerryFunctionCreate(&factor, scale, delete_resource, &f) == 0);
  EXPECT(FerryFunctionSetGlobal("c.scale", f, 0) == 0);
  EXPECT(FerryFunctionSetGlobal("c.scale", f, 0) == -1);
  expect_raised("RuntimeError");
  FerryObjectDecRef(f);
  EXPECT(FerryFunctionGetGlobal("c.scale", &f) == 0 && f != NULL);
  arg.type_index = kFerryInt;
  arg.small_len = 0;
  arg.v_int64 = 14;
  EXPECT(FerryFunctionCall(f, &arg, 1, &result) == 0);
  EXPECT(result.type_index == kFerryInt && result.v_int64 == 42);
  arg.type_index = kFerryFloat;
  arg.v_float64 = 1.0;
  EXPECT(FerryFunctionCall(f, &arg, 1, &result) == -1);
  expect_raised("TypeError");
  FerryObjectDecRef(f);
  EXPECT(FerryFunctionRemoveGlobal("c.scale", &removed) == 0 && removed == 1);
  EXPECT(resource_deleted == 1);
  EXPECT(FerryFunctionGetGlobal("c.scale", &missing) == 0 && missing == NULL);
}

/* A ferry.List made, mutated and read from C: globals make it, the C ABI appends and reads. */
static void test_lists(void) {
  FerryObjectHandle make = NULL;
  FerryAny result;
  FerryAny value;
  int64_t size = -1;
  const FerryAny* cells = NULL;
  EXPECT(FerryFunctionGetGlobal("ferry.List", &make) == 0 && make != NULL);
  result.type_index = kFerryNone;
  result.v_int64 = 0;
  EXPECT(FerryFunctionCall(make, NULL, 0, &result) == 0);
  EXPECT(result.type_index == kFerryList);
  value.type_index = kFerryInt;
  value.small_len = 0;
  value.v_int64 = 41;
  EXPECT(FerryListAppend(result.v_obj, &value) == 0);
  value.v_int64 = 42;
  EXPECT(FerryListAppend(result.v_obj, &value) == 0);
  value.v_int64 = 7;
  EXPECT(FerryListSetItem(result.v_obj, 0, &value) == 0);
  EXPECT(FerryListGetData(result.v_obj, &size, &cells) == 0);
  EXPECT(size == 2 && cells[0].v_int64 == 7 && cells[1].v_int64 == 42);
  EXPECT(FerryListSetItem(result.v_obj, 2, &value) == -1);
  expect_raised("IndexError");
  EXPECT(FerryListGetData(make, &size, &cells) == -1); /* a Function is no List */
  expect_raised("TypeError");
  EXPECT(FerryAnyRelease(&result) == 0);
  EXPECT(FerryObjectDecRef(make) == 0);
}

/* A node type registered at run time from C, used through the C ABI: creation from all field
 * values, reads and writes by name, the errors of a bad table. */
static void test_run_time_types(void) {
  FerryFieldSpec fields[3] = {
      {"count", "int", 0}, {"label", "str", kFerryFieldNoRepr}, {"next", "Optional[c.Cell]", 0}};
  FerryFieldSpec bad[2] = {{"a", "int", 0}, {"a", "float", 0}};
  FerryFieldSpec unknown[1] = {{"a", "Array[int", 0}};
  int32_t index = -1, again = -1, unused = -1;
  FerryAny values[3];
  FerryAny out;
  FerryObjectHandle cell = NULL, other = NULL;
  EXPECT(FerryTypeRegisterWithFields("c.Cell", kFerryObject, 0, 0, fields, 3, &index) == 0);
  EXPECT(index >= kFerryDynamicObjectBegin);
  EXPECT(FerryTypeRegisterWithFields("c.Cell", kFerryObject, 0, 0, fields, 3, &again) == 0);
  EXPECT(again == index); /* the same declaration again */
  EXPECT(FerryTypeRegisterWithFields("c.Cell", kFerryObject, 0, 0, fields, 2, &unused) == -1);
  expect_raised("ValueError");
  EXPECT(FerryTypeRegisterWithFields("c.Dup", kFerryObject, 0, 0, bad, 2, &unused) == -1);
  expect_raised("ValueError");
  EXPECT(FerryTypeRegisterWithFields("c.Bad", kFerryObject, 0, 0, unknown, 1, &unused) == -1);
  expect_raised("ValueError");
  EXPECT(FerryTypeRegisterWithFields("c.UnderString", kFerryString, 0, 0, fields, 1, &unused) ==
         -1);
  expect_raised("TypeError");

  values[0].type_index = kFerryInt;
  values[0].small_len = 0;
  values[0].v_int64 = 7;
  values[1].type_index = kFerrySmallStr;
  values[1].small_len = 2;
  memcpy(values[1].v_bytes, "hi", 3);
  values[2].type_index = kFerryNone;
  values[2].small_len = 0;
  values[2].v_int64 = 0;
  EXPECT(FerryObjectCreate(index, values, 3, &cell) == 0 && cell != NULL);
  EXPECT(((FerryObject*)cell)->type_index == index);
  EXPECT(FerryObjectGetAttr(cell, "count", &out) == 0);
  EXPECT(out.type_index == kFerryInt && out.v_int64 == 7);
  /* A wrong type for a field is a TypeError naming it; the object is unchanged. */
  values[2] = values[0];
  EXPECT(FerryObjectCreate(index, values, 3, &other) == -1);
  expect_raised("TypeError");
  EXPECT(FerryObjectCreate(index, values, 2, &other) == -1);
  expect_raised("TypeError");
  values[2].type_index = index; /* a c.Cell: a cell holds the object's own type index */
  values[2].v_obj = cell;
  EXPECT(FerryObjectCreate(index, values, 3, &other) == 0);
  EXPECT(FerryObjectSetAttr(cell, "next", &values[0]) == -1);
  expect_raised("TypeError");
  EXPECT(FerryObjectSetAttr(cell, "count", &values[0]) == 0);
  EXPECT(FerryObjectDecRef(other) == 0);
  EXPECT(FerryObjectDecRef(cell) == 0);
}

static FerryAny raw_str(const char* text) {
  FerryAny a;
  a.type_index = kFerryRawStr;
  a.small_len = 0;
  a.v_c_str = text;
  return a;
}

static FerryAny int_any(int64_t value) {
  FerryAny a;
  a.type_index = kFerryInt;
  a.small_len = 0;
  a.v_int64 = value;
  return a;
}

/* Defaults recorded in a run-time type's field table (FerryTypeSetFieldDefault): MakeNode gives
 * one to a field it is not given; a field without one stays required; what cannot be applied
 * is refused, naming the problem. */
static void test_field_defaults(void) {
  FerryFieldSpec fields[2] = {{"n", "int", 0}, {"step", "int", 0}};
  int32_t index = -1;
  FerryAny seven = int_any(7), text = raw_str("seven");
  FerryAny args[3], result, step;
  FerryObjectHandle make = NULL;
  EXPECT(FerryTypeRegisterWithFields("c.Defaulted", kFerryObject, 0, 0, fields, 2, &index) == 0);
  EXPECT(FerryTypeSetFieldDefault(index, "step", &text, 0) == -1); /* the field takes ints */
  expect_raised("TypeError");
  EXPECT(FerryTypeSetFieldDefault(index, "nope", &seven, 0) == -1);
  expect_raised("AttributeError");
  EXPECT(FerryTypeSetFieldDefault(index, "step", &seven, kFerryDefaultFactory) == -1);
  expect_raised("TypeError"); /* a factory is a Function */
  EXPECT(FerryTypeSetFieldDefault(kFerryString, "step", &seven, 0) == -1);
  expect_raised("TypeError"); /* not a type registered from a field table */
  EXPECT(FerryTypeSetFieldDefault(index, "step", &seven, 0) == 0);

  EXPECT(FerryFunctionGetGlobal("ferry.MakeNode", &make) == 0 && make != NULL);
  if (make == NULL) return;
  args[0] = raw_str("c.Defaulted");
  args[1] = raw_str("n");
  args[2] = int_any(1);
  EXPECT(FerryFunctionCall(make, args, 3, &result) == 0);
  EXPECT(result.type_index == index);
  if (result.type_index == index) {
    EXPECT(FerryObjectGetAttr(result.v_obj, "step", &step) == 0);
    EXPECT(step.type_index == kFerryInt && step.v_int64 == 7);
    FerryAnyRelease(&result);
  }
  args[1] = raw_str("step"); /* n left out: it has no default */
  EXPECT(FerryFunctionCall(make, args, 3, &result) == -1);
  expect_raised("ValueError");

  /* Cleared (a frontend's teardown), the defaults are gone: step is required again. */
  EXPECT(FerryTypeClearFieldDefaults(index) == 0);
  args[1] = raw_str("n");
  EXPECT(FerryFunctionCall(make, args, 3, &result) == -1);
  expect_raised("ValueError");
  EXPECT(FerryTypeClearFieldDefaults(index) == 0); /* nothing left to clear */
  EXPECT(FerryTypeClearFieldDefaults(kFerryString) == -1);
  expect_raised("TypeError"); /* not a type registered from a field table */
  EXPECT(FerryTypeClearFieldDefaults(1 << 30) == -1);
  expect_raised("ValueError"); /* not registered */
  FerryObjectDecRef(make);
}

/* A producer's DLPack tensor (2x3 float32 over a static buffer) counting its deleter's calls. */
static float tensor_values[6] = {0, 1, 2, 3, 4, 5};
static int64_t tensor_shape[2] = {2, 3};
static int tensor_deleted = 0;
static void delete_versioned(DLManagedTensorVersioned* self) {
  (void)self;
  ++tensor_deleted;
}

static void test_tensors(void) {
  DLManagedTensorVersioned managed;
  const FerryTensorObject* view;
  FerryObjectHandle tensor = NULL;
  FerryObjectHandle empty = NULL;
  DLManagedTensor* out = NULL;
  DLManagedTensorVersioned* out_versioned = NULL;
  int64_t shape[1] = {5};
  FerryDataType f64;
  memset(&managed, 0, sizeof(managed));
  managed.version.major = DLPACK_MAJOR_VERSION;
  managed.version.minor = 0;
  managed.deleter = delete_versioned;
  managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  managed.dl_tensor.data = tensor_values;
  managed.dl_tensor.device.device_type = kDLCPU;
  managed.dl_tensor.ndim = 2;
  managed.dl_tensor.dtype.code = kDLFloat;
  managed.dl_tensor.dtype.bits = 32;
  managed.dl_tensor.dtype.lanes = 1;
  managed.dl_tensor.shape = tensor_shape;

  /* An unknown major version is refused and the tensor stays the caller's. */
  managed.version.major = 9;
  EXPECT(FerryTensorFromDLPackVersioned(&managed, &tensor) == -1);
  expect_raised("ValueError");
  EXPECT(tensor_deleted == 0);
  managed.version.major = DLPACK_MAJOR_VERSION;

  EXPECT(FerryTensorFromDLPackVersioned(&managed, &tensor) == 0);
  view = (const FerryTensorObject*)tensor;
  EXPECT(view->header.type_index == kFerryTensor);
  EXPECT(view->dl_tensor.data == (void*)tensor_values); /* no copy */
  EXPECT(view->dl_tensor.strides != NULL && view->dl_tensor.strides[0] == 3 &&
         view->dl_tensor.strides[1] == 1);
  /* Read-only: only the versioned hand-over can carry it. */
  EXPECT(FerryTensorToDLPack(tensor, &out) == -1);
  expect_raised("ValueError");
  EXPECT(FerryTensorToDLPackVersioned(tensor, &out_versioned) == 0);
  EXPECT((out_versioned->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  EXPECT(out_versioned->dl_tensor.shape[1] == 3);
  EXPECT(((FerryObject*)tensor)->ref_counter == 2);
  out_versioned->deleter(out_versioned);
  EXPECT(((FerryObject*)tensor)->ref_counter == 1);
  EXPECT(tensor_deleted == 0);
  EXPECT(FerryObjectDecRef(tensor) == 0);
  EXPECT(tensor_deleted == 1); /* exactly once, when the last reference went */

  EXPECT(FerryDataTypeFromString("float64", &f64) == 0);
  EXPECT(FerryTensorEmpty(shape, 1, f64, managed.dl_tensor.device, &empty) == 0);
  view = (const FerryTensorObject*)empty;
  EXPECT(((uintptr_t)view->dl_tensor.data) % 64 == 0);
  EXPECT(FerryTensorToDLPack(empty, &out) == 0);
  EXPECT(out->dl_tensor.shape[0] == 5 && out->dl_tensor.dtype.bits == 64);
  out->deleter(out);
  EXPECT(FerryObjectDecRef(empty) == 0);
  shape[0] = -1;
  EXPECT(FerryTensorEmpty(shape, 1, f64, managed.dl_tensor.device, &empty) == -1);
  expect_raised("ValueError");
}

int main(int argc, char** argv) {
  int32_t index = -1;
  int32_t child = -1;
  const char* key = NULL;
  const FerryTypeInfo* info = NULL;
  FerryObjectHandle str = NULL;
  const char* data = NULL;
  size_t size = 0;
  FerryDataType dtype;

  EXPECT(FerryTypeKeyToIndex("ferry.String", &index) == 0);
  EXPECT(index == kFerryString);

  /* A borrowed string's length: the producer's, or counted to the NUL when it gave 0. */
  {
    FerryAny raw;
    raw.type_index = kFerryRawStr;
    raw.v_c_str = "first\0second";
    raw.small_len = 12;
    EXPECT(FerryRawStrLength(&raw) == 12);
    raw.small_len = 0;
    EXPECT(FerryRawStrLength(&raw) == 5);
  }
  EXPECT(FerryTypeIndexToKey(kFerryObject, &key) == 0);
  EXPECT(strcmp(key, "ferry.Object") == 0);

  /* A type hierarchy registered from C. */
  EXPECT(FerryTypeGetOrAllocIndex("c.Parent", -1, kFerryObject, 2, 0, &index) == 0);
  EXPECT(index >= kFerryDynamicObjectBegin);
  EXPECT(FerryTypeGetOrAllocIndex("c.Child", -1, index, 0, 0, &child) == 0);
  EXPECT(child == index + 1);
  EXPECT(FerryTypeGetInfo(child, &info) == 0);
  EXPECT(info->type_depth == 2);
  EXPECT(info->type_ancestors[0] == kFerryObject && info->type_ancestors[1] == index);
  EXPECT(strcmp(info->type_key, "c.Child") == 0);

  /* Errors come back as -1 and an Error object of the right kind. */
  EXPECT(FerryTypeKeyToIndex("c.Missing", &index) == -1);
  expect_raised("KeyError");
  EXPECT(FerryTypeGetOrAllocIndex("c.Child", -1, kFerryObject, 0, 0, &child) == -1);
  expect_raised("RuntimeError");
  EXPECT(FerryDataTypeFromString("float3.2", &dtype) == -1);
  expect_raised("ValueError");

  /* Strings and data types. */
  EXPECT(FerryStringCreate("hello", 5, &str) == 0);
  EXPECT(FerryStringGetData(str, &data, &size) == 0);
  EXPECT(size == 5 && strcmp(data, "hello") == 0);
  EXPECT(((FerryObject*)str)->type_index == kFerryString);
  /* The layout c_api.h promises: the same bytes through the struct as through the call. */
  EXPECT(((FerryStringObject*)str)->data == data && ((FerryStringObject*)str)->size == 5);
  {
    FerryObjectHandle bytes = NULL;
    const FerryStringObject* view;
    EXPECT(FerryBytesCreate("a\0b", 3, &bytes) == 0);
    view = (const FerryStringObject*)bytes;
    EXPECT(view->header.type_index == kFerryBytes && view->size == 3);
    EXPECT(memcmp(view->data, "a\0b", 4) == 0); /* and the NUL after them */
    EXPECT(FerryObjectDecRef(bytes) == 0);
  }
  EXPECT(FerryObjectIncRef(str) == 0);
  EXPECT(((FerryObject*)str)->ref_counter == 2);
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryDataTypeFromString("int64", &dtype) == 0);
  EXPECT(dtype.code == kFerryDTypeInt && dtype.bits == 64 && dtype.lanes == 1);

  test_lists();
  test_run_time_types();
  test_field_defaults();
  test_tensors();

  if (argc > 1) {
    test_functions(argv[1]);
  } else {
    ++failed;
    fprintf(stderr, "usage: test_c_api_c path/to/good_module.so\n");
  }

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
