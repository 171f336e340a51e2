// A library with a static initializer of its own (not a Ferry registration) that throws. The
// exception leaves the initializer inside the dynamic loader, which C++ cannot unwind through:
// the process terminates with the exception's message. docs/reliability.md ("What is not
// promised") says so and what to write instead; LoadLibrary.AThrowingStaticInitializerOfTheUser*
// keeps that page true.
#include <ferry/ferry.h>

#include <stdexcept>

namespace {

struct ThrowsWhenConstructed {
  ThrowsWhenConstructed() { throw std::runtime_error("a user's static initializer threw"); }
};

const ThrowsWhenConstructed kThrows;

}  // namespace
