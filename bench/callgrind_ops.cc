// Runs one operation N times, for `valgrind --tool=callgrind`: instruction counts per operation
// are stable where wall-clock times on a shared machine are not. Usage: callgrind_ops OP N.
#include <ferry/ferry.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using namespace ferry;  // NOLINT

class SmallNode : public Object {
 public:
  int64_t value = 1;
  static constexpr const char* _type_key = "callgrind.Small";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SmallNode, Object);
};
struct PlainSmall {
  int32_t count = 1;
  int32_t type = 0;
  void* deleter = nullptr;
  int64_t value = 1;
};

volatile int64_t sink;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s make|new|copy|atomic N\n", argv[0]);
    return 2;
  }
  const char* op = argv[1];
  const long n = std::atol(argv[2]);
  (void)SmallNode::RuntimeTypeIndex();
  if (std::strcmp(op, "make") == 0) {
    for (long i = 0; i < n; ++i) sink = make_object<SmallNode>()->value;
  } else if (std::strcmp(op, "new") == 0) {
    for (long i = 0; i < n; ++i) {
      auto* p = new PlainSmall();
      sink = p->value;
      delete p;
    }
  } else if (std::strcmp(op, "copy") == 0) {
    ObjectRef ref(make_object<SmallNode>());
    for (long i = 0; i < n; ++i) {
      ObjectRef copy = ref;
      sink = reinterpret_cast<intptr_t>(copy.get());
    }
  } else if (std::strcmp(op, "atomic") == 0) {
    std::atomic<int32_t> count{1};
    for (long i = 0; i < n; ++i) {
      count.fetch_add(1, std::memory_order_relaxed);
      sink = reinterpret_cast<intptr_t>(&count);
      count.fetch_sub(1, std::memory_order_acq_rel);
    }
  } else {
    std::fprintf(stderr, "unknown op %s\n", op);
    return 2;
  }
  return 0;
}
