// Built three times by tests/CMakeLists.txt: against this tree's headers (abi_module.so), against
// a copy whose FERRY_ABI_VERSION is raised (abi_bumped_module.so) and against a copy whose
// FunctionObj has a field more (abi_layout_module.so). LoadLibrary must refuse the last two
// before this file's static initializers run: the plain one below leaves a trace to check.
#include <ferry/ferry.h>
#include <stdlib.h>  // setenv

namespace {

[[maybe_unused]] const int kRan = [] {
  setenv("FERRY_TEST_ABI_MODULE_RAN", "1", 1);
  return 0;
}();

FERRY_REGISTER_GLOBAL("testing.abi.version").set_body_typed([]() -> int64_t {
  return FERRY_ABI_VERSION;
});

}  // namespace
