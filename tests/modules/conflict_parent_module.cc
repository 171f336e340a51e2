// A library that registers the type key of good_module's counter under another parent, between
// a global and a node type it registers first and a global it registers after. Loaded after
// good_module, it must fail as a whole: an error naming the key, both parents and the library,
// and none of its globals, types or nodes left behind.
#include <ferry/ferry.h>

namespace {

class BaseNode : public ferry::Object {
 public:
  int64_t tag = 0;
  void VisitAttrs(ferry::AttrVisitor* v) { v->Visit("tag", &tag); }
  static constexpr const char* _type_key = "testing.conflict.Base";
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseNode, ferry::Object);
};

// good_module registers "testing.module.Counter" directly under ferry.Object.
class ClashingCounterNode : public BaseNode {
 public:
  ferry::String text;
  void VisitAttrs(ferry::AttrVisitor* v) { v->Visit("text", &text); }
  static constexpr const char* _type_key = "testing.module.Counter";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ClashingCounterNode, BaseNode);
};

FERRY_REGISTER_GLOBAL("testing.conflict.before").set_body_typed([]() { return 1; });
FERRY_REGISTER_NODE_TYPE(BaseNode);
FERRY_REGISTER_NODE_TYPE(ClashingCounterNode);
FERRY_REGISTER_GLOBAL("testing.conflict.make").set_body_typed([]() {
  ferry::ObjectPtr<ClashingCounterNode> n = ferry::make_object<ClashingCounterNode>();
  n->text = "not an int";
  return ferry::ObjectRef(std::move(n));
});

}  // namespace
