// A library loaded at run time by the tests: registers globals and makes objects of a type it
// defines, which must stay valid after the loader has returned them.
#include <ferry/ferry.h>

namespace {

class CounterNode : public ferry::Object {
 public:
  int64_t value = 0;
  static constexpr const char* _type_key = "testing.module.Counter";
  FERRY_DECLARE_FINAL_OBJECT_INFO(CounterNode, ferry::Object);
};

FERRY_REGISTER_GLOBAL("testing.module.add").set_body_typed([](int64_t a, int64_t b) {
  return a + b;
});

FERRY_REGISTER_GLOBAL("testing.module.make_counter").set_body_typed([](int64_t start) {
  ferry::ObjectPtr<CounterNode> n = ferry::make_object<CounterNode>();
  n->value = start;
  return ferry::ObjectRef(std::move(n));
});

FERRY_REGISTER_GLOBAL("testing.module.counter_value").set_body_typed([](ferry::ObjectRef c) {
  const CounterNode* node = c.as<CounterNode>();
  FERRY_CHECK(node != nullptr) << "expected a counter, got " << c->GetTypeKey();
  return node->value;
});

}  // namespace
