// A library of a user project: one function and one node type, registered at load time.
#include <ferry/ferry.h>

#include <string>

namespace {
class PointNode : public ferry::Object {
 public:
  int64_t x = 0, y = 0;
  void VisitAttrs(ferry::AttrVisitor* v) {
    v->Visit("x", &x);
    v->Visit("y", &y);
  }
  static constexpr const char* _type_key = "consumer.Point";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PointNode, ferry::Object);
};
FERRY_REGISTER_NODE_TYPE(PointNode);
FERRY_REGISTER_GLOBAL("consumer.hello").set_body_typed([](std::string name) {
  return "hello " + name;
});
}  // namespace
