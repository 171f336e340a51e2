// A library whose threads outlive their caller: testing.background.start(f, threads) starts
// detached C++ threads that call f() until a call fails, then report the first error on stderr.
// The Python tests start them with a Python callback and let the interpreter exit under them.
#include <ferry/ferry.h>

#include <cstdio>
#include <thread>

FERRY_REGISTER_GLOBAL("testing.background.start")
    .set_body_typed([](ferry::Function f, int64_t num_threads) {
      for (int64_t t = 0; t < num_threads; ++t) {
        std::thread([f] {
          try {
            for (;;) f();
          } catch (const ferry::Error& e) {
            std::fprintf(stderr, "background call failed: %s\n", e.what());
          }
        }).detach();
      }
    });
