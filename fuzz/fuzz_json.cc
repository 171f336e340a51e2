// libFuzzer target: LoadJSON on arbitrary bytes, with the test IR's node types registered.
// Bad input must be a ferry::Error (anything else escapes and libFuzzer reports it); input that
// loads must save and load again to the same text (a round trip that drifts is a bug). And
// LoadJSON's fast path must not change the outcome: the same text, or the same error message
// (with its position), with the fast path turned off.
#include <ferry/ferry.h>
#include <ferry/reflection/json.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../src/json_reader_internal.h"  // SetLoadJSONFastPath
#include "../tests/cpp/test_ir.h"

namespace {
/// The text `text` loads to, saved again, or "error: " and the message.
std::string Outcome(std::string_view text, ferry::Any* value) {
  try {
    *value = ferry::LoadJSON(text);
  } catch (const ferry::Error& e) {
    return std::string("error: ") + e.what();
  }
  return ferry::SaveJSON(*value);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ferry::Any value, general_value;
  const std::string outcome = Outcome(text, &value);
  ferry::details::SetLoadJSONFastPath(false);
  const std::string general = Outcome(text, &general_value);
  ferry::details::SetLoadJSONFastPath(true);
  if (outcome != general) {
    std::fprintf(stderr, "LoadJSON with and without its fast path differ:\n%s\n%s\n",
                 outcome.c_str(), general.c_str());
    std::abort();
  }
  if (outcome.rfind("error: ", 0) == 0) return 0;  // rejected with an error: what it must do
  const std::string& saved = outcome;
  std::string again = ferry::SaveJSON(ferry::LoadJSON(saved));
  if (saved != again) {
    std::fprintf(stderr, "SaveJSON(LoadJSON(SaveJSON(x))) differs:\n%s\n%s\n", saved.c_str(),
                 again.c_str());
    std::abort();
  }
  return 0;
}
