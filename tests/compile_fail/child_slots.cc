// expect: MidNode: _type_child_slots must be smaller than the parent's
#include <ferry/object.h>

struct BaseNode : ferry::Object {
  static constexpr const char* _type_key = "cf.Base";
  static constexpr int32_t _type_child_slots = 4;
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseNode, ferry::Object);
};
// Forgets to declare its own slots, so it would inherit all 4 of its parent's.
struct MidNode : BaseNode {
  static constexpr const char* _type_key = "cf.Mid";
  FERRY_DECLARE_BASE_OBJECT_INFO(MidNode, BaseNode);
};
int main() { return MidNode::RuntimeTypeIndex(); }
