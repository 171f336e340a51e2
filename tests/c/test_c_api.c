/* The C ABI used from plain C99: registry lookups, a new type, strings, data types and errors.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include <ferry/c_api.h>
#include <stdio.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define EXPECT(cond)                                                \
  do {                                                              \
    if (cond) {                                                     \
      ++passed;                                                     \
    } else {                                                        \
      ++failed;                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
    }                                                               \
  } while (0)

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

int main(void) {
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
  EXPECT(FerryObjectIncRef(str) == 0);
  EXPECT(((FerryObject*)str)->ref_counter == 2);
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryObjectDecRef(str) == 0);
  EXPECT(FerryDataTypeFromString("int64", &dtype) == 0);
  EXPECT(dtype.code == kFerryDTypeInt && dtype.bits == 64 && dtype.lanes == 1);

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
