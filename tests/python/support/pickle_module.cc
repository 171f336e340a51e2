// A library for the pickling tests across processes (tests/python/test_distributed*.py): a
// binary tree of Leaf and Pair nodes and C++ passes over it, registered under PICKLE_NS
// ("ptest"). Built twice, under two namespaces: ferry_pickle_testing.so (loaded by the tests
// and by the workers through their pickles) and ferry_pickle_missing.so ("pmissing", which a
// test loads from a copy it deletes, so that workers cannot find it). No process loads it at
// start-up: workers get it only from the pickles.
#include <ferry/ferry.h>

#include <cstdint>
#include <utility>
#include <vector>

#ifndef PICKLE_NS
#error "build with -DPICKLE_NS=\"name\""
#endif

namespace {

using namespace ferry;

class LeafNode : public Object {
 public:
  int64_t value = 0;
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = PICKLE_NS ".Leaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LeafNode, Object);
};

class PairNode : public Object {
 public:
  ObjectRef a, b;
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("a", &a);
    v->Visit("b", &b);
  }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr const char* _type_key = PICKLE_NS ".Pair";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PairNode, Object);
};

FERRY_REGISTER_NODE_TYPE(LeafNode);
FERRY_REGISTER_NODE_TYPE(PairNode);

ObjectRef MakeLeaf(int64_t value) {
  auto n = make_object<LeafNode>();
  n->value = value;
  return ObjectRef(std::move(n));
}

ObjectRef MakePair(ObjectRef a, ObjectRef b) {
  auto n = make_object<PairNode>();
  n->a = std::move(a);
  n->b = std::move(b);
  return ObjectRef(std::move(n));
}

/// A balanced tree of the leaves first .. first + count - 1 (2 * count - 1 nodes).
ObjectRef Balanced(int64_t first, int64_t count) {
  if (count <= 1) return MakeLeaf(first);
  int64_t half = count / 2;
  return MakePair(Balanced(first, half), Balanced(first + half, count - half));
}

/// The sum of the leaves (a C++ pass; iterative, so any depth works).
int64_t Sum(const ObjectRef& root) {
  int64_t total = 0;
  std::vector<const Object*> stack{root.get()};
  while (!stack.empty()) {
    const Object* node = stack.back();
    stack.pop_back();
    if (const auto* leaf = node->as<LeafNode>()) {
      total += leaf->value;
    } else if (const auto* pair = node->as<PairNode>()) {
      stack.push_back(pair->a.get());
      stack.push_back(pair->b.get());
    } else {
      FERRY_THROW(TypeError) << PICKLE_NS ".sum: not a tree node: " << node->GetTypeKey();
    }
  }
  return total;
}

/// The tree with every leaf's value multiplied by `factor` (a C++ pass returning objects).
ObjectRef Scale(const ObjectRef& node, int64_t factor) {
  if (const auto* leaf = node.as<LeafNode>()) return MakeLeaf(leaf->value * factor);
  if (const auto* pair = node.as<PairNode>()) {
    return MakePair(Scale(pair->a, factor), Scale(pair->b, factor));
  }
  FERRY_THROW(TypeError) << PICKLE_NS ".scale: not a tree node: " << node->GetTypeKey();
}

FERRY_REGISTER_GLOBAL(PICKLE_NS ".leaf").set_body_typed(MakeLeaf);
FERRY_REGISTER_GLOBAL(PICKLE_NS ".pair").set_body_typed(MakePair);
FERRY_REGISTER_GLOBAL(PICKLE_NS ".balanced").set_body_typed([](int64_t count) {
  return Balanced(0, count);
});
FERRY_REGISTER_GLOBAL(PICKLE_NS ".sum").set_body_typed([](ObjectRef root) { return Sum(root); });
FERRY_REGISTER_GLOBAL(PICKLE_NS ".scale").set_body_typed([](ObjectRef root, int64_t factor) {
  return Scale(root, factor);
});

}  // namespace
