// A library whose registrations throw things other than ferry::Error from inside static
// initializers: a node type whose default constructor throws std::runtime_error, and a global
// whose parameter names do not match its arity. Loading it must be a RuntimeError from
// LoadLibrary that names the first failure, with nothing of the library kept.
#include <ferry/ferry.h>

#include <stdexcept>

namespace {

class ExplodingNode : public ferry::Object {
 public:
  int64_t value = 0;
  ExplodingNode() { throw std::runtime_error("ExplodingNode refuses to be built"); }
  void VisitAttrs(ferry::AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr const char* _type_key = "testing.throwing.Exploding";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ExplodingNode, ferry::Object);
};

FERRY_REGISTER_GLOBAL("testing.throwing.before").set_body_typed([]() { return 1; });
FERRY_REGISTER_NODE_TYPE(ExplodingNode);
FERRY_REGISTER_GLOBAL("testing.throwing.bad_names")
    .set_body_typed([](int64_t a) { return a; }, {"a", "b"});
FERRY_REGISTER_GLOBAL("testing.throwing.after").set_body_typed([]() { return 2; });

}  // namespace
