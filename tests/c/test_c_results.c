/* The rule "Results" of c_api.h, function by function: after a failure every out pointer holds
 * what the caller put there (the function did not write it) and the caller owns nothing new; a
 * call's result cell holds None. Each C ABI function that has an out pointer and a way to fail
 * is made to fail here, its out pointers preset to a sentinel. Reference counts are checked where
 * a failure could keep a reference; LeakSanitizer (the build-asan/ ctest run) reports any other
 * leak. Prints "N passed, N failed" and exits non-zero on any failure. */
#include <ferry/c_api.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"

/* Takes the raised error and checks its kind. */
static void expect_raised(const char* kind, int line) {
  FerryObjectHandle err = NULL;
  const char* got_kind = "";
  FerryErrorMoveFromRaised(&err);
  if (err != NULL) FerryErrorGetInfo(err, &got_kind, NULL, NULL);
  if (err != NULL && strcmp(got_kind, kind) == 0) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "%s:%d: expected a raised %s, got %s\n", __FILE__, line, kind,
            err != NULL ? got_kind : "none");
  }
  if (err != NULL) FerryObjectDecRef(err);
}

/* `call` returns -1 and raises `kind`. */
#define FAILS(call, kind)          \
  do {                             \
    EXPECT((call) == -1);          \
    expect_raised(kind, __LINE__); \
  } while (0)

/* What the out pointers are preset to: an address nothing returns, an int nothing returns. */
static char sentinel_storage;
#define SENTINEL ((void*)&sentinel_storage)
#define SENTINEL_INT (-7777)

static uint32_t ref_count(FerryObjectHandle obj) { return ((FerryObject*)obj)->ref_counter; }

static FerryAny int_cell(int64_t v) {
  FerryAny cell;
  memset(&cell, 0, sizeof(cell));
  cell.type_index = kFerryInt;
  cell.v_int64 = v;
  return cell;
}

static FerryAny object_cell(FerryObjectHandle obj) {
  FerryAny cell;
  memset(&cell, 0, sizeof(cell));
  cell.type_index = ((FerryObject*)obj)->type_index;
  cell.v_obj = (FerryObject*)obj;
  return cell;
}

static int cell_is_sentinel(const FerryAny* cell) {
  return cell->type_index == kFerryInt && cell->v_int64 == SENTINEL_INT;
}

/* Entry points nothing returns, the sentinels of function-pointer results. */
static int sentinel_call(void* self, const FerryAny* args, int32_t num_args, FerryAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  (void)result;
  return -1;
}
static int sentinel_get(const void* field, FerryAny* out) {
  (void)field;
  (void)out;
  return -1;
}
static int sentinel_set(void* field, const FerryAny* value) {
  (void)field;
  (void)value;
  return -1;
}

/* Counts the calls of a resource or owner deleter that a failure must not call. */
static int deleted = 0;
static void count_delete(void* resource) {
  (void)resource;
  ++deleted;
}

static void test_registry(void) {
  int32_t index = SENTINEL_INT;
  const char* key = (const char*)SENTINEL;
  const FerryTypeInfo* info = (const FerryTypeInfo*)SENTINEL;
  FerryFieldSpec dup[2] = {{"a", "int", 0}, {"a", "float", 0}};

  FAILS(FerryTypeKeyToIndex("results.Missing", &index), "KeyError");
  EXPECT(index == SENTINEL_INT);
  FAILS(FerryTypeKeyToIndex(NULL, &index), "ValueError");
  EXPECT(index == SENTINEL_INT);
  FAILS(FerryTypeIndexToKey(1 << 30, &key), "IndexError");
  EXPECT(key == (const char*)SENTINEL);
  FAILS(FerryTypeGetInfo(-5, &info), "IndexError");
  EXPECT(info == (const FerryTypeInfo*)SENTINEL);

  EXPECT(FerryTypeGetOrAllocIndex("results.Parent", -1, kFerryObject, 1, 0, &index) == 0);
  EXPECT(FerryTypeGetOrAllocIndex("results.Child", -1, index, 0, 0, &index) == 0);
  index = SENTINEL_INT;
  FAILS(FerryTypeGetOrAllocIndex("results.Child", -1, kFerryObject, 0, 0, &index), "RuntimeError");
  EXPECT(index == SENTINEL_INT);
  FAILS(FerryTypeRegisterWithFields("results.Dup", kFerryObject, 0, 0, dup, 2, &index),
        "ValueError");
  EXPECT(index == SENTINEL_INT);
  FAILS(FerryTypeRegisterWithFields("results.Under", kFerryString, 0, 0, dup, 1, &index),
        "TypeError");
  EXPECT(index == SENTINEL_INT);
}

/* Objects of a type registered here: creation, field access. */
static void test_objects(void) {
  FerryFieldSpec fields[2] = {{"label", "str", 0}, {"count", "int", 0}};
  int32_t index = -1;
  FerryObjectHandle label = NULL;
  FerryObjectHandle node = NULL;
  FerryObjectHandle out = SENTINEL;
  FerryAny values[2];
  FerryAny cell = int_cell(SENTINEL_INT);
  int64_t offset = SENTINEL_INT;
  FerryFieldGetter getter = sentinel_get;
  FerryFieldSetter setter = sentinel_set;

  EXPECT(FerryTypeRegisterWithFields("results.Node", kFerryObject, 0, 0, fields, 2, &index) == 0);
  EXPECT(FerryStringCreate("label", 5, &label) == 0);
  /* The second field is checked after the object exists and holds the first: the half-made
   * object goes, and with it the reference it took to the label. */
  values[0] = object_cell(label);
  values[1] = object_cell(label);
  FAILS(FerryObjectCreate(index, values, 2, &out), "TypeError");
  EXPECT(out == SENTINEL);
  values[0] = int_cell(1);
  values[1] = int_cell(2);
  FAILS(FerryObjectCreate(index, values, 2, &out), "TypeError");
  EXPECT(out == SENTINEL);
  FAILS(FerryObjectCreate(index, values, 1, &out), "TypeError");
  EXPECT(out == SENTINEL);
  FAILS(FerryObjectCreate(kFerryString, values, 1, &out), "TypeError");
  EXPECT(out == SENTINEL);
  FAILS(FerryObjectCreate(1 << 30, values, 1, &out), "IndexError");
  EXPECT(out == SENTINEL);
  EXPECT(ref_count(label) == 1);

  values[0] = object_cell(label);
  EXPECT(FerryObjectCreate(index, values, 2, &node) == 0);
  EXPECT(ref_count(label) == 2);

  /* Field access: an unknown name fails before anything is written. */
  FAILS(FerryObjectGetFieldGetter(node, "missing", &offset, &getter), "AttributeError");
  EXPECT(offset == SENTINEL_INT && getter == sentinel_get);
  FAILS(FerryObjectGetFieldSetter(node, "missing", &offset, &setter), "AttributeError");
  EXPECT(offset == SENTINEL_INT && setter == sentinel_set);
  FAILS(FerryObjectGetAttr(node, "missing", &cell), "AttributeError");
  EXPECT(cell_is_sentinel(&cell));
  FAILS(FerryObjectGetAttr(node, NULL, &cell), "ValueError");
  EXPECT(cell_is_sentinel(&cell));

  /* A failed write leaves the field and the value's count as they were. */
  values[0] = int_cell(5);
  FAILS(FerryObjectSetAttr(node, "label", &values[0]), "TypeError");
  EXPECT(ref_count(label) == 2);
  EXPECT(FerryObjectGetAttr(node, "label", &cell) == 0);
  EXPECT(cell.type_index == kFerryString && cell.v_obj == (FerryObject*)label);
  EXPECT(FerryAnyRelease(&cell) == 0);

  EXPECT(FerryObjectDecRef(node) == 0);
  EXPECT(ref_count(label) == 1);
  EXPECT(FerryObjectDecRef(label) == 0);
}

static void test_values(void) {
  FerryDataType dtype;
  FerryDataType before;
  FerryObjectHandle str = NULL;
  FerryObjectHandle out = SENTINEL;
  const char* data = (const char*)SENTINEL;
  size_t size = 12345;
  int64_t count = SENTINEL_INT;
  const FerryAny* cells = (const FerryAny*)SENTINEL;

  memset(&dtype, 0x5a, sizeof(dtype));
  before = dtype;
  FAILS(FerryDataTypeFromString("float3.2", &dtype), "ValueError");
  EXPECT(memcmp(&dtype, &before, sizeof(dtype)) == 0);
  FAILS(FerryDataTypeFromString(NULL, &dtype), "ValueError");
  EXPECT(memcmp(&dtype, &before, sizeof(dtype)) == 0);

  FAILS(FerryStringCreate(NULL, 3, &out), "ValueError");
  EXPECT(out == SENTINEL);
  FAILS(FerryBytesCreate(NULL, 3, &out), "ValueError");
  EXPECT(out == SENTINEL);

  EXPECT(FerryStringCreate("abc", 3, &str) == 0);
  FAILS(FerryArrayGetData(str, &count, &cells), "TypeError");
  EXPECT(count == SENTINEL_INT && cells == (const FerryAny*)SENTINEL);
  FAILS(FerryListGetData(str, &count, &cells), "TypeError");
  EXPECT(count == SENTINEL_INT && cells == (const FerryAny*)SENTINEL);
  {
    FerryObjectHandle make = NULL;
    FerryAny list = int_cell(0);
    EXPECT(FerryFunctionGetGlobal("ferry.List", &make) == 0 && make != NULL);
    EXPECT(FerryFunctionCall(make, NULL, 0, &list) == 0 && list.type_index == kFerryList);
    FAILS(FerryStringGetData(list.v_obj, &data, &size), "TypeError");
    EXPECT(data == (const char*)SENTINEL && size == 12345);
    EXPECT(FerryAnyRelease(&list) == 0);
    EXPECT(FerryObjectDecRef(make) == 0);
  }
  EXPECT(FerryObjectDecRef(str) == 0);
}

/* A callback that writes a new String into its result cell and then fails: whoever calls it
 * through Ferry gets None back and the String is released, not leaked. */
static int writes_then_fails(void* resource, const FerryAny* args, int32_t num_args,
                             FerryAny* result) {
  FerryObjectHandle str = NULL;
  (void)resource;
  (void)args;
  (void)num_args;
  if (FerryStringCreate("lost", 4, &str) != 0) return -1;
  *result = object_cell(str);
  FerryErrorSetRaisedFromCStr("ValueError", "written, then failed");
  return -1;
}

static void test_functions(void) {
  FerryObjectHandle str = NULL;
  FerryObjectHandle f = NULL;
  FerryObjectHandle out = SENTINEL;
  FerryAny result = int_cell(SENTINEL_INT);
  FerryFunctionSafeCall safe_call = sentinel_call;
  FerryFunctionCallback callback = sentinel_call;
  void* resource = SENTINEL;
  int32_t count = SENTINEL_INT;
  int32_t flags = SENTINEL_INT;
  int32_t removed = SENTINEL_INT;
  const char* const* names = (const char* const*)SENTINEL;
  const char* path = (const char*)SENTINEL;

  /* No callback: nothing is made, and the caller keeps its resource (no deleter call). */
  FAILS(FerryFunctionCreate(SENTINEL, NULL, count_delete, &out), "ValueError");
  EXPECT(out == SENTINEL && deleted == 0);

  EXPECT(FerryStringCreate("not a function", 14, &str) == 0);
  FAILS(FerryFunctionCall(str, NULL, 0, &result), "TypeError");
  EXPECT(result.type_index == kFerryNone); /* the call's result cell: None */
  FAILS(FerryFunctionGetSafeCall(str, &safe_call), "TypeError");
  EXPECT(safe_call == sentinel_call);
  FAILS(FerryFunctionGetCallback(str, &callback, &resource), "TypeError");
  EXPECT(callback == sentinel_call && resource == SENTINEL);
  FAILS(FerryFunctionGetParamNames(str, &count, &names), "TypeError");
  EXPECT(count == SENTINEL_INT && names == (const char* const*)SENTINEL);
  FAILS(FerryFunctionGetSignature(str, &path, &count, &names), "TypeError");
  EXPECT(path == (const char*)SENTINEL && count == SENTINEL_INT &&
         names == (const char* const*)SENTINEL);
  FAILS(FerryFunctionGetFlags(str, &flags), "TypeError");
  EXPECT(flags == SENTINEL_INT);
  FAILS(FerryFunctionGetGlobal(NULL, &out), "ValueError");
  EXPECT(out == SENTINEL);
  FAILS(FerryFunctionRemoveGlobal(NULL, &removed), "ValueError");
  EXPECT(removed == SENTINEL_INT);
  FAILS(FerryFunctionListGlobalNames(&count, NULL), "ValueError");
  EXPECT(count == SENTINEL_INT);
  FAILS(FerryLibraryOfTypeKey(NULL, &path), "ValueError");
  EXPECT(path == (const char*)SENTINEL);
  FAILS(FerryLibraryOfGlobal(NULL, &path), "ValueError");
  EXPECT(path == (const char*)SENTINEL);
  EXPECT(ref_count(str) == 1);

  /* A callee that writes its result and then fails: None, and its String released. */
  EXPECT(FerryFunctionCreate(NULL, writes_then_fails, count_delete, &f) == 0);
  result = int_cell(SENTINEL_INT);
  FAILS(FerryFunctionCall(f, NULL, 0, &result), "ValueError");
  EXPECT(result.type_index == kFerryNone);
  /* The same through the entry point a frontend fetches once: the cell arrives holding None. */
  EXPECT(FerryFunctionGetSafeCall(f, &safe_call) == 0);
  result.type_index = kFerryNone;
  FAILS(safe_call(f, NULL, 0, &result), "ValueError");
  EXPECT(result.type_index == kFerryNone);
  EXPECT(deleted == 0);
  EXPECT(FerryObjectDecRef(f) == 0);
  EXPECT(deleted == 1); /* the resource of a Function that was made: released with it */
  deleted = 0;
  EXPECT(FerryObjectDecRef(str) == 0);
}

static int reserve_calls = 0;
static int counts_calls(void* resource, const FerryAny* args, int32_t num_args, FerryAny* result) {
  (void)resource;
  (void)args;
  (void)num_args;
  (void)result;
  ++reserve_calls;
  return 0;
}

/* FerryFunctionSetStackReserve: a reserve larger than any stack refuses the call with a
 * RuntimeError before the callback runs; 0 lets it run again; not for other objects. */
static void test_stack_reserve(void) {
  FerryObjectHandle f = NULL;
  FerryObjectHandle str = NULL;
  FerryAny result = int_cell(SENTINEL_INT);
  EXPECT(FerryFunctionCreate(NULL, counts_calls, NULL, &f) == 0);
  EXPECT(FerryFunctionSetStackReserve(f, (size_t)1 << 40) == 0);
  FAILS(FerryFunctionCall(f, NULL, 0, &result), "RuntimeError");
  EXPECT(result.type_index == kFerryNone && reserve_calls == 0);
  EXPECT(FerryFunctionSetStackReserve(f, 0) == 0);
  EXPECT(FerryFunctionCall(f, NULL, 0, &result) == 0);
  EXPECT(reserve_calls == 1);
  EXPECT(FerryStringCreate("not a function", 14, &str) == 0);
  FAILS(FerryFunctionSetStackReserve(str, 1), "TypeError");
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryFunctionGetGlobal("ferry.List", &str) == 0 && str != NULL); /* a C++ function */
  FAILS(FerryFunctionSetStackReserve(str, 1), "TypeError");
  FAILS(FerryFunctionSetStackReserve(NULL, 1), "ValueError");
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryObjectDecRef(f) == 0);

  /* A function that dies with less than its reserve left keeps its resource until the next call
   * of a function with a reserve that has its stack: the deleter may need that stack too. */
  deleted = 0;
  EXPECT(FerryFunctionCreate(NULL, counts_calls, count_delete, &f) == 0);
  EXPECT(FerryFunctionSetStackReserve(f, (size_t)1 << 40) == 0);
  EXPECT(FerryObjectDecRef(f) == 0);
  EXPECT(deleted == 0);
  EXPECT(FerryFunctionCreate(NULL, counts_calls, count_delete, &f) == 0);
  EXPECT(FerryFunctionSetStackReserve(f, 1) == 0);
  EXPECT(FerryFunctionCall(f, NULL, 0, &result) == 0);
  EXPECT(deleted == 1);
  EXPECT(FerryObjectDecRef(f) == 0);
  EXPECT(deleted == 2);
  deleted = 0;
}

static float tensor_values[6] = {0, 1, 2, 3, 4, 5};
static int64_t tensor_shape[2] = {2, 3};
static int dlpack_deleted = 0;
static void delete_unversioned(DLManagedTensor* self) {
  (void)self;
  ++dlpack_deleted;
}
static void delete_versioned(DLManagedTensorVersioned* self) {
  (void)self;
  ++dlpack_deleted;
}

static DLTensor float_view(void) {
  DLTensor view;
  memset(&view, 0, sizeof(view));
  view.data = tensor_values;
  view.device.device_type = kDLCPU;
  view.ndim = 2;
  view.dtype.code = kDLFloat;
  view.dtype.bits = 32;
  view.dtype.lanes = 1;
  view.shape = tensor_shape;
  return view;
}

/* FerryDeleterSetStackReserve (process-wide, by the deleter): an error's payload deleter and a
 * view's owner deleter released with less than their reserve left are kept, and run by the next
 * call of a function with a reserve that has its stack, or by the next release of such a deleter
 * that has its own; 0 bytes removes the check. */
static void test_deleter_stack_reserve(void) {
  FerryObjectHandle error = NULL;
  FerryObjectHandle tensor = NULL;
  FerryObjectHandle f = NULL;
  FerryAny result = int_cell(SENTINEL_INT);
  DLTensor view = float_view();
  deleted = 0;

  FAILS(FerryDeleterSetStackReserve(NULL, 1), "ValueError");
  EXPECT(FerryDeleterSetStackReserve(count_delete, (size_t)1 << 40) == 0);
  EXPECT(FerryErrorCreate("RuntimeError", "carries a payload", NULL, &error) == 0);
  EXPECT(FerryErrorSetPayload(error, NULL, count_delete) == 0);
  EXPECT(FerryErrorSetPayload(error, NULL, count_delete) == 0); /* the old one: kept too */
  EXPECT(FerryObjectDecRef(error) == 0);
  EXPECT(FerryTensorFromDLTensor(&view, 0, NULL, count_delete, &tensor) == 0);
  EXPECT(FerryObjectDecRef(tensor) == 0);
  EXPECT(deleted == 0);
  EXPECT(FerryFunctionCreate(NULL, counts_calls, NULL, &f) == 0);
  EXPECT(FerryFunctionSetStackReserve(f, 1) == 0);
  EXPECT(FerryFunctionCall(f, NULL, 0, &result) == 0);
  EXPECT(deleted == 3);

  /* A release that has the stack runs its deleter and the ones kept before it. */
  EXPECT(FerryTensorFromDLTensor(&view, 0, NULL, count_delete, &tensor) == 0);
  EXPECT(FerryObjectDecRef(tensor) == 0);
  EXPECT(deleted == 3);
  EXPECT(FerryDeleterSetStackReserve(count_delete, 1) == 0); /* set again: replaced */
  EXPECT(FerryErrorCreate("RuntimeError", "carries a payload", NULL, &error) == 0);
  EXPECT(FerryErrorSetPayload(error, NULL, count_delete) == 0);
  EXPECT(FerryObjectDecRef(error) == 0);
  EXPECT(deleted == 5);

  /* 0 bytes: no check (count_delete is the other tests' deleter again). */
  EXPECT(FerryDeleterSetStackReserve(count_delete, (size_t)1 << 40) == 0);
  EXPECT(FerryDeleterSetStackReserve(count_delete, 0) == 0);
  EXPECT(FerryTensorFromDLTensor(&view, 0, NULL, count_delete, &tensor) == 0);
  EXPECT(FerryObjectDecRef(tensor) == 0);
  EXPECT(deleted == 6);
  deleted = 0;
  EXPECT(FerryObjectDecRef(f) == 0);
}

static void test_tensors(void) {
  DLManagedTensor managed;
  DLManagedTensorVersioned versioned;
  DLTensor view = float_view();
  FerryObjectHandle tensor = NULL;
  FerryObjectHandle str = NULL;
  FerryObjectHandle out = SENTINEL;
  DLManagedTensor* out_managed = (DLManagedTensor*)SENTINEL;
  DLManagedTensorVersioned* out_versioned = (DLManagedTensorVersioned*)SENTINEL;
  void* owner = SENTINEL;
  void (*owner_deleter)(void*) = count_delete;
  int64_t shape[1] = {-1};
  FerryDataType f32;

  /* A dtype Ferry cannot hold: refused, and the DLPack tensor stays the caller's. */
  memset(&managed, 0, sizeof(managed));
  managed.dl_tensor = view;
  managed.dl_tensor.dtype.code = 99;
  managed.deleter = delete_unversioned;
  FAILS(FerryTensorFromDLPack(&managed, &out), "ValueError");
  EXPECT(out == SENTINEL && dlpack_deleted == 0);
  memset(&versioned, 0, sizeof(versioned));
  versioned.version.major = 9;
  versioned.dl_tensor = view;
  versioned.deleter = delete_versioned;
  FAILS(FerryTensorFromDLPackVersioned(&versioned, &out), "ValueError");
  EXPECT(out == SENTINEL && dlpack_deleted == 0);

  /* A view with a negative dimension: refused, and the owner is not released. */
  view.ndim = -1;
  FAILS(FerryTensorFromDLTensor(&view, 0, SENTINEL, count_delete, &out), "ValueError");
  EXPECT(out == SENTINEL && deleted == 0);
  FAILS(FerryTensorViewOf(&view, &out), "ValueError");
  EXPECT(out == SENTINEL);
  view.ndim = 2;
  EXPECT(FerryDataTypeFromString("float32", &f32) == 0);
  FAILS(FerryTensorEmpty(shape, 1, f32, view.device, &out), "ValueError");
  EXPECT(out == SENTINEL);

  /* A read-only tensor handed out unversioned: refused, no reference kept for the hand-over. */
  EXPECT(FerryTensorFromDLTensor(&view, DLPACK_FLAG_BITMASK_READ_ONLY, NULL, NULL, &tensor) == 0);
  FAILS(FerryTensorToDLPack(tensor, &out_managed), "ValueError");
  EXPECT(out_managed == (DLManagedTensor*)SENTINEL);
  EXPECT(ref_count(tensor) == 1);

  /* Not a tensor. */
  EXPECT(FerryStringCreate("x", 1, &str) == 0);
  FAILS(FerryTensorToDLPack(str, &out_managed), "TypeError");
  EXPECT(out_managed == (DLManagedTensor*)SENTINEL);
  FAILS(FerryTensorToDLPackVersioned(str, &out_versioned), "TypeError");
  EXPECT(out_versioned == (DLManagedTensorVersioned*)SENTINEL);
  FAILS(FerryTensorGetOwner(str, &owner, &owner_deleter), "TypeError");
  EXPECT(owner == SENTINEL && owner_deleter == count_delete);
  EXPECT(ref_count(str) == 1);
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryObjectDecRef(tensor) == 0);
}

static void test_errors(void) {
  FerryObjectHandle str = NULL;
  FerryObjectHandle out = SENTINEL;
  const char* kind = (const char*)SENTINEL;
  const char* message = (const char*)SENTINEL;
  const char* backtrace = (const char*)SENTINEL;
  void* payload = SENTINEL;
  void (*payload_deleter)(void*) = count_delete;
  const FerryErrorFrame* frames = (const FerryErrorFrame*)SENTINEL;
  int32_t num_frames = SENTINEL_INT;

  FAILS(FerryErrorCreate(NULL, "message", NULL, &out), "ValueError");
  EXPECT(out == SENTINEL);
  EXPECT(FerryStringCreate("not an error", 12, &str) == 0);
  FAILS(FerryErrorGetInfo(str, &kind, &message, &backtrace), "TypeError");
  EXPECT(kind == (const char*)SENTINEL && message == (const char*)SENTINEL &&
         backtrace == (const char*)SENTINEL);
  FAILS(FerryErrorGetPayload(str, &payload, &payload_deleter), "TypeError");
  EXPECT(payload == SENTINEL && payload_deleter == count_delete);
  FAILS(FerryErrorGetFrames(str, &frames, &num_frames), "TypeError");
  EXPECT(frames == (const FerryErrorFrame*)SENTINEL && num_frames == SENTINEL_INT);
  EXPECT(ref_count(str) == 1);
  EXPECT(FerryObjectDecRef(str) == 0);
}

int main(void) {
  test_registry();
  test_objects();
  test_values();
  test_functions();
  test_stack_reserve();
  test_deleter_stack_reserve();
  test_tensors();
  test_errors();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
