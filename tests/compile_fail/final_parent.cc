// expect: Child: parent type LeafNode is declared final
#include <ferry/object.h>

struct LeafNode : ferry::Object {
  static constexpr const char* _type_key = "cf.Leaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LeafNode, ferry::Object);
};
struct Child : LeafNode {
  static constexpr const char* _type_key = "cf.Child";
  FERRY_DECLARE_BASE_OBJECT_INFO(Child, LeafNode);
};
int main() { return Child::RuntimeTypeIndex(); }
