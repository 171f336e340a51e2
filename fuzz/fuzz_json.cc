// libFuzzer target: LoadJSON on arbitrary bytes, with the test IR's node types registered.
// Bad input must be a ferry::Error (anything else escapes and libFuzzer reports it); input that
// loads must save and load again to the same text (a round trip that drifts is a bug).
#include <ferry/ferry.h>
#include <ferry/reflection/json.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../tests/cpp/test_ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ferry::Any value;
  try {
    value = ferry::LoadJSON(text);
  } catch (const ferry::Error&) {
    return 0;  // rejected with an error: what it must do
  }
  std::string saved = ferry::SaveJSON(value);
  std::string again = ferry::SaveJSON(ferry::LoadJSON(saved));
  if (saved != again) {
    std::fprintf(stderr, "SaveJSON(LoadJSON(SaveJSON(x))) differs:\n%s\n%s\n", saved.c_str(),
                 again.c_str());
    std::abort();
  }
  return 0;
}
