// libFuzzer target: the DataType parser on arbitrary bytes. Bad text must be a ferry::Error; a
// type that parses must print as text that parses back to the same type.
#include <ferry/ferry.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ferry::DataType parsed;
  try {
    parsed = ferry::DataType(text);
  } catch (const ferry::Error&) {
    return 0;
  }
  const std::string printed = parsed.ToString();
  ferry::DataType back(printed);
  if (back != parsed || back.ToString() != printed) {
    std::fprintf(stderr, "DataType round trip: '%.*s' -> '%s' -> '%s'\n", static_cast<int>(size),
                 reinterpret_cast<const char*>(data), printed.c_str(), back.ToString().c_str());
    std::abort();
  }
  return 0;
}
