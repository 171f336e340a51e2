// A library that registers a name the test program has already taken: loading it must fail
// with an error naming the function, not abort the process.
#include <ferry/ferry.h>

FERRY_REGISTER_GLOBAL("testing.taken").set_body_typed([]() { return 2; });
FERRY_REGISTER_GLOBAL("testing.duplicate_module.fresh").set_body_typed([]() { return 3; });
