// libintimm_other_layout.so of the Rust tests (tests/hostile.rs): a library that registers
// demo.IntImm as libdemo.so does, but with another layout (a String field `value` where
// libdemo.so has an int): what a newer build of a library may do between an unload and a load.
#include <ferry/ferry.h>

using namespace ferry;

class IntImmNode : public Object {
 public:
  String value;
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = "demo.IntImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntImmNode, Object);
};
FERRY_REGISTER_NODE_TYPE(IntImmNode);
