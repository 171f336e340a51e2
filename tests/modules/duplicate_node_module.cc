// A library that registers one node type twice: loading it must fail with an error naming the
// type, not terminate the process from inside a static initializer.
#include <ferry/ferry.h>

namespace {
class TwiceNode : public ferry::Object {
 public:
  int64_t value = 0;
  void VisitAttrs(ferry::AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr const char* _type_key = "testing.Twice";
  FERRY_DECLARE_FINAL_OBJECT_INFO(TwiceNode, ferry::Object);
};
FERRY_REGISTER_NODE_TYPE(TwiceNode);
FERRY_REGISTER_NODE_TYPE(TwiceNode);
}  // namespace
