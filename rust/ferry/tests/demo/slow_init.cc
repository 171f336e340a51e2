// libslowinit.so of the Rust tests: its initializer calls the global "rs.test.in_initializer"
// (a Rust closure that lingers) before registering a global of its own, so a test can keep
// the loader busy inside dlopen while another thread uses the registry (tests/deadlock.rs).
#include <ferry/ferry.h>

using namespace ferry;

static const bool called_back = [] {
  if (auto f = Function::GetGlobal("rs.test.in_initializer")) (*f)();
  return true;
}();

FERRY_REGISTER_GLOBAL("slow_init.loaded").set_body_typed([]() { return called_back; });
