/* A library written in C against c_api.h alone: it has no ABI record, and loads. Its
 * constructor registers a global through the C ABI. */
#include <ferry/c_api.h>

static int Answer(void* resource, const FerryAny* args, int32_t num_args, FerryAny* result) {
  (void)resource;
  (void)args;
  (void)num_args;
  result->type_index = kFerryInt;
  result->v_int64 = 42;
  return 0;
}

__attribute__((constructor)) static void Register(void) {
  FerryObjectHandle f = NULL;
  if (FerryFunctionCreate(NULL, Answer, NULL, &f) != 0) return;
  FerryFunctionSetGlobal("testing.plain_c.answer", f, 0);
  FerryObjectDecRef(f);
}
