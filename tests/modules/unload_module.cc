// A library the tests unload (UnloadLibrary): its type, a global making objects of it, and a
// global returning a Function whose code lives here. UNLOAD_MODULE_VERSION tells two builds
// apart (the reload test swaps one for the other under the same file name).
#include <ferry/ferry.h>

#ifndef UNLOAD_MODULE_VERSION
#define UNLOAD_MODULE_VERSION 1
#endif

namespace {

class BoxNode : public ferry::Object {
 public:
  int64_t value = 0;
  ferry::ObjectRef next;  // a chain, whose free goes through the deferred-free queue
  void VisitAttrs(ferry::AttrVisitor* v) {
    v->Visit("value", &value);
    v->Visit("next", &next);
  }
  static constexpr const char* _type_key = "testing.unload.Box";
  FERRY_DECLARE_FINAL_OBJECT_INFO(BoxNode, ferry::Object);
};
FERRY_REGISTER_NODE_TYPE(BoxNode);

FERRY_REGISTER_GLOBAL("testing.unload.make_box").set_body_typed([](int64_t value) {
  ferry::ObjectPtr<BoxNode> box = ferry::make_object<BoxNode>();
  box->value = value;
  return ferry::ObjectRef(std::move(box));
});

FERRY_REGISTER_GLOBAL("testing.unload.make_chain").set_body_typed([](int64_t length) {
  ferry::ObjectRef head;
  for (int64_t k = 0; k < length; ++k) {
    ferry::ObjectPtr<BoxNode> box = ferry::make_object<BoxNode>();
    box->value = k;
    box->next = std::move(head);
    head = ferry::ObjectRef(std::move(box));
  }
  return head;
});

FERRY_REGISTER_GLOBAL("testing.unload.adder").set_body_typed([](int64_t k) {
  return ferry::Function::FromTyped([k](int64_t x) { return x + k; });
});

/// An error thrown here: its throw site (file and line) and frames are this library's, and the
/// error outlives the library when it is kept past UnloadLibrary.
FERRY_REGISTER_GLOBAL("testing.unload.throw").set_body_typed([](int64_t value) {
  FERRY_THROW(ValueError) << "thrown by unload_module " << value;
});

FERRY_REGISTER_GLOBAL("testing.unload.version").set_body_typed([]() -> int64_t {
  return UNLOAD_MODULE_VERSION;
});

}  // namespace
