// Tests of ferry/reflection/transform.h: StructuralVisit and StructuralTransform (post-order,
// sharing, identity when unchanged, copy-on-write spine, containers, deep chains, errors with
// paths, cycles).
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "test_ir.h"

namespace {

using namespace test_ir;

/// What happened to TrackedNodes, in order: "visit N" (from the tests' fn) and "free N".
std::vector<std::string> g_events;

/// A node that logs its destruction, and holds one child.
class TrackedNode : public Object {
 public:
  int64_t id = 0;
  ObjectRef kid;
  ~TrackedNode() { g_events.push_back("free " + std::to_string(id)); }
  void VisitAttrs(AttrVisitor* v) {
    v->Visit("id", &id);
    v->Visit("kid", &kid);
  }
  static constexpr const char* _type_key = "test.transform.Tracked";
  FERRY_DECLARE_FINAL_OBJECT_INFO(TrackedNode, Object);
};

ObjectRef Tracked(int64_t id, ObjectRef kid = ObjectRef()) {
  ObjectPtr<TrackedNode> node = make_object<TrackedNode>();
  node->id = id;
  node->kid = std::move(kid);
  return ObjectRef(std::move(node));
}

/// Replaces IntImm(from) by IntImm(to); keeps everything else.
auto Replace(int64_t from, int64_t to) {
  return [from, to](const ObjectRef& node) -> ObjectRef {
    const auto* imm = node.as<IntImmNode>();
    if (imm != nullptr && imm->value == from) return IntImm(to);
    return ObjectRef();
  };
}

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + std::string(e.message());
  }
  return "no error";
}

TEST(Transform, VisitIsPostOrderAndVisitsSharedOnce) {
  Expr shared = Add(IntImm(1), IntImm(2));
  Expr root = Add(shared, shared);
  std::vector<const Object*> seen;
  StructuralVisit(root, [&](const ObjectRef& node) { seen.push_back(node.get()); });
  // IntImm(1), IntImm(2), shared, root: the shared Add once, children first.
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[2], shared.get());
  EXPECT_EQ(seen[3], root.get());
  EXPECT_EQ(seen[0], static_cast<const AddNode*>(shared.get())->a.get());
}

TEST(Transform, VisitWalksContainersAndSkipsPlainValues) {
  Array<Any> items{IntImm(1), String("s"), 3, Map<String, Expr>{{"k", IntImm(4)}}};
  List<Any> list{items, 5};
  int64_t objects = 0, imms = 0;
  StructuralVisit(list, [&](const ObjectRef& node) {
    ++objects;
    imms += node.as<IntImmNode>() != nullptr;
  });
  // list, items, IntImm(1), the map, IntImm(4): strings and ints are values.
  EXPECT_EQ(objects, 5);
  EXPECT_EQ(imms, 2);
  int64_t none = 0;
  StructuralVisit(Any(3), [&](const ObjectRef&) { ++none; });
  EXPECT_EQ(none, 0);
}

TEST(Transform, NothingChangedReturnsTheSameObject) {
  Expr root = Let(Var("x"), IntImm(1), Add(IntImm(2), IntImm(3)));
  Expr out = StructuralTransform(root, Replace(7, 8));
  EXPECT_TRUE(out.same_as(root));
  Array<Expr> arr{root, IntImm(5)};
  EXPECT_TRUE(StructuralTransform(arr, Replace(7, 8)).same_as(arr));
}

TEST(Transform, ReturningTheNodeItselfKeepsIt) {
  Expr left = Add(IntImm(1), IntImm(2));
  Expr root = Add(left, Add(IntImm(3), IntImm(4)));
  auto identity = [](const ObjectRef& node) { return node; };
  EXPECT_TRUE(StructuralTransform(root, identity).same_as(root));
  // With a change below, the parents above it are copied once, the rest kept.
  Expr out = StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
    const auto* imm = node.as<IntImmNode>();
    if (imm != nullptr && imm->value == 4) return IntImm(40);
    return node;
  });
  EXPECT_TRUE(out.as<AddNode>()->a.same_as(left));
  EXPECT_EQ(out.as<AddNode>()->b.as<AddNode>()->b.as<IntImmNode>()->value, 40);
}

TEST(Transform, OnlyTheChangedSpineIsCopied) {
  Expr left = Add(IntImm(1), IntImm(2));
  Expr right = Add(IntImm(3), IntImm(4));
  Expr root = Add(left, right);
  Expr out = StructuralTransform(root, Replace(4, 40));
  ASSERT_FALSE(out.same_as(root));
  const auto* node = out.as<AddNode>();
  EXPECT_TRUE(node->a.same_as(left));  // untouched sibling kept
  ASSERT_FALSE(node->b.same_as(right));
  const auto* new_right = node->b.as<AddNode>();
  EXPECT_TRUE(new_right->a.same_as(static_cast<const AddNode*>(right.get())->a));
  EXPECT_EQ(new_right->b.as<IntImmNode>()->value, 40);
  // The input is unchanged (copy-on-write, not in place).
  EXPECT_EQ(static_cast<const AddNode*>(right.get())->b.as<IntImmNode>()->value, 4);
}

TEST(Transform, SharingIsKept) {
  Expr shared = Add(IntImm(1), IntImm(2));
  Expr root = Add(Add(shared, IntImm(9)), shared);
  int64_t calls = 0;
  Expr out = StructuralTransform(root, [&](const ObjectRef& node) -> ObjectRef {
    ++calls;
    return Replace(1, 10)(node);
  });
  // 1, 2, shared, 9, Add(shared, 9), root: the shared Add is transformed once.
  EXPECT_EQ(calls, 6);
  const auto* top = out.as<AddNode>();
  const Expr& via_left = top->a.as<AddNode>()->a;
  EXPECT_TRUE(via_left.same_as(top->b));  // both parents point at the one new child
  EXPECT_FALSE(via_left.same_as(shared));
  EXPECT_EQ(via_left.as<AddNode>()->a.as<IntImmNode>()->value, 10);
}

TEST(Transform, ContainersAreRebuilt) {
  Map<String, Expr> table{{"k", IntImm(1)}, {"j", IntImm(2)}};
  Array<Any> arr{IntImm(1), table, String("s")};
  List<Any> list{arr, IntImm(2)};
  Dict<Any, Any> dict{{String("x"), list}};
  Any out = StructuralTransform(AnyView(dict), Replace(1, 11));
  auto new_dict = out.cast<Dict<Any, Any>>();
  EXPECT_FALSE(new_dict.same_as(dict));
  auto new_list = new_dict.at(String("x")).cast<List<Any>>();
  EXPECT_FALSE(new_list.same_as(list));
  EXPECT_TRUE(new_list[1].cast<ObjectRef>().same_as(list[1].cast<ObjectRef>()));
  auto new_arr = new_list[0].cast<Array<Any>>();
  EXPECT_EQ(new_arr[0].cast<IntImm>()->value, 11);
  EXPECT_EQ(new_arr[2].cast<String>(), "s");
  auto new_table = new_arr[1].cast<Map<String, Expr>>();
  EXPECT_EQ(new_table.at("k").as<IntImmNode>()->value, 11);
  EXPECT_TRUE(new_table.at("j").same_as(table.at("j")));
  // The originals are untouched.
  EXPECT_EQ(arr[0].cast<IntImm>()->value, 1);
  EXPECT_TRUE(list[0].cast<ObjectRef>().same_as(arr));
}

TEST(Transform, OptionalAndAnyFieldsAreRebuilt) {
  auto attrs = make_object<AttrsNode>();
  attrs->maybe = IntImm(1);
  attrs->anything = Array<Expr>{IntImm(1)};
  attrs->text = "kept";
  attrs->count = 3;
  ObjectRef root(attrs);
  ObjectRef out = StructuralTransform(root, Replace(1, 2));
  const auto* node = out.as<AttrsNode>();
  ASSERT_NE(node, attrs.get());
  EXPECT_EQ(node->maybe.value().as<IntImmNode>()->value, 2);
  EXPECT_EQ(node->anything.cast<Array<Expr>>()[0].as<IntImmNode>()->value, 2);
  EXPECT_EQ(node->text, "kept");
  EXPECT_EQ(node->count.value(), 3);
}

TEST(Transform, ReplacementOfAnotherTypeWhereTheFieldAcceptsIt) {
  // Let.value is an Expr: an Add may replace an IntImm there.
  Expr root = Let(Var("x"), IntImm(1), IntImm(2));
  Expr out = StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
    const auto* imm = node.as<IntImmNode>();
    if (imm != nullptr && imm->value == 1) return Add(IntImm(0), IntImm(1));
    return ObjectRef();
  });
  EXPECT_NE(out.as<LetNode>()->value.as<AddNode>(), nullptr);
}

TEST(Transform, ReplacementTheFieldCannotHoldIsATypeErrorNamingTheField) {
  Expr root = Let(Var("x"), IntImm(1), IntImm(2));
  std::string error = ErrorOf([&] {
    StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
      if (node.as<VarNode>() != nullptr) return IntImm(5);  // Let.var must be a Var
      return ObjectRef();
    });
  });
  EXPECT_NE(error.find("TypeError"), std::string::npos) << error;
  EXPECT_NE(error.find("field 'var' of 'test.Let'"), std::string::npos) << error;
  EXPECT_NE(error.find("at root (test.Let)"), std::string::npos) << error;
}

TEST(Transform, SameTypeReplacementKeepsCountsRight) {
  // A replacement of the child's own node type is stored as a pointer, without a conversion:
  // the copy must release the child it copied and hold the replacement once.
  g_events.clear();
  {
    ObjectRef root = Tracked(1, Tracked(2));
    ObjectRef out = StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
      const auto* tracked = node.as<TrackedNode>();
      if (tracked != nullptr && tracked->id == 2) return Tracked(3);
      return ObjectRef();
    });
    const auto* copy = out.as<TrackedNode>();
    ASSERT_NE(copy, nullptr);
    ASSERT_NE(copy, root.get());
    const ObjectRef& old_kid = static_cast<const TrackedNode*>(root.get())->kid;
    EXPECT_EQ(old_kid.use_count(), 1);  // the input's only: the copy let go of it
    EXPECT_EQ(copy->kid.use_count(), 1);
    EXPECT_EQ(copy->kid.as<TrackedNode>()->id, 3);
    EXPECT_EQ(copy->kid.as<TrackedNode>()->kid.get(), nullptr);
  }
  std::vector<std::string> freed = g_events;
  std::sort(freed.begin(), freed.end());
  EXPECT_EQ(freed, (std::vector<std::string>{"free 1", "free 1", "free 2", "free 3"}));
}

TEST(Transform, ContainerOfTheSameTypeIsStillChecked) {
  // Func.params is an Array<Var>: an Array (the same type as the child) of an IntImm must not
  // go in unchecked.
  Expr root = Func(Array<Var>{Var("x")}, IntImm(1));
  std::string error = ErrorOf([&] {
    StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
      if (node.as<ArrayObj>() != nullptr) return Array<Any>{IntImm(5)};
      return ObjectRef();
    });
  });
  EXPECT_NE(error.find("TypeError"), std::string::npos) << error;
  EXPECT_NE(error.find("field 'params' of 'test.Func'"), std::string::npos) << error;
}

TEST(Transform, ErrorsFromFnCarryThePath) {
  Expr root = Add(IntImm(1), Let(Var("x"), IntImm(2), Add(IntImm(3), IntImm(4))));
  std::string error = ErrorOf([&] {
    StructuralTransform(root, [](const ObjectRef& node) -> ObjectRef {
      const auto* imm = node.as<IntImmNode>();
      if (imm != nullptr && imm->value == 4) FERRY_THROW(ValueError) << "no fours";
      return ObjectRef();
    });
  });
  EXPECT_EQ(error, "ValueError: StructuralTransform: at root.b.body.b (test.IntImm): no fours");
  Array<Any> arr{IntImm(0), Map<String, Expr>{{"k", IntImm(4)}}};
  error = ErrorOf([&] {
    StructuralVisit(arr, [](const ObjectRef& node) {
      const auto* imm = node.as<IntImmNode>();
      if (imm != nullptr && imm->value == 4) FERRY_THROW(KeyError) << "four";
    });
  });
  EXPECT_EQ(error, "KeyError: StructuralVisit: at root[1][\"k\"] (test.IntImm): four");
}

TEST(Transform, CyclesThroughListsAreAnError) {
  List<Any> list{IntImm(1)};
  list.push_back(list);
  std::string error = ErrorOf([&] { StructuralVisit(list, [](const ObjectRef&) {}); });
  EXPECT_NE(error.find("ValueError: StructuralVisit: at root[1] (ferry.List): the graph has a "
                       "cycle"),
            std::string::npos)
      << error;
  error = ErrorOf([&] { StructuralTransform(AnyView(list), Replace(1, 2)); });
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
  Dict<Any, Any> dict;
  List<Any> inner{dict};
  dict.Set(String("k"), inner);
  error = ErrorOf([&] { StructuralTransform(AnyView(inner), Replace(1, 2)); });
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
  list.pop_back();  // break the cycles so the objects are freed
  dict.erase(String("k"));
}

TEST(Transform, RootReplacedAndTypedResult) {
  Expr out = StructuralTransform(Expr(IntImm(1)), Replace(1, 5));
  EXPECT_EQ(out.as<IntImmNode>()->value, 5);
  std::string error = ErrorOf([&] {
    StructuralTransform(Expr(IntImm(1)),
                        [](const ObjectRef&) -> ObjectRef { return Array<Any>(); });
  });
  EXPECT_NE(error.find("TypeError"), std::string::npos) << error;
  EXPECT_EQ(StructuralTransform(Any(3), Replace(1, 2)).cast<int64_t>(), 3);
}

TEST(Transform, OptionalReturnKeepsOnNullopt) {
  Expr root = Add(IntImm(1), IntImm(2));
  Expr out = StructuralTransform(root, [](const ObjectRef& node) -> Optional<Expr> {
    if (node.as<IntImmNode>() != nullptr && node.as<IntImmNode>()->value == 2) {
      return Expr(IntImm(3));
    }
    return std::nullopt;
  });
  EXPECT_EQ(out.as<AddNode>()->b.as<IntImmNode>()->value, 3);
  EXPECT_TRUE(out.as<AddNode>()->a.same_as(root.as<AddNode>()->a));
}

TEST(Transform, NodesWithoutACopyConstructorAreRebuiltFromFields) {
  // MutableChildNode is copy-constructible; a List-held Fixed is a leaf without object fields.
  auto m = make_object<MutableChildNode>();
  m->count = 7;
  m->ratio = 0.5;
  m->label = "l";
  m->expr = IntImm(1);
  ObjectRef out = StructuralTransform(ObjectRef(m), Replace(1, 2));
  const auto* node = out.as<MutableChildNode>();
  ASSERT_NE(node, nullptr);
  EXPECT_NE(node, m.get());
  EXPECT_EQ(node->count, 7);
  EXPECT_EQ(node->ratio, 0.5);
  EXPECT_EQ(node->expr.value().as<IntImmNode>()->value, 2);
}

/// A chain of `depth` Adds: the Add at level L (the root is level 0) holds the Add of level L + 1
/// in `a` and IntImm(depth - L) in `b`; IntImm(0) is at level `depth`.
Expr AddChain(int depth) {
  Expr chain = IntImm(0);
  for (int i = 1; i <= depth; ++i) chain = Add(chain, IntImm(i));
  return chain;
}

/// The access path of the Add at `level` of an AddChain: "root.a.a...".
std::string ChainPath(int level) {
  std::string path = "root";
  for (int i = 0; i < level; ++i) path += ".a";
  return path;
}

/// The node at `level` of a chain made by AddChain (or transformed from one).
const Object* ChainAt(const Expr& chain, int level) {
  const Object* node = chain.get();
  for (int i = 0; i < level; ++i) node = static_cast<const AddNode*>(node)->a.get();
  return node;
}

/// The walk recurses natively into unique immutable nodes down to kStructuralWalkRecursion
/// levels under the root (level 128 is the last walked so, 129 the first on the explicit
/// stack). On chains ending on both sides of that depth: the order of the visits, errors from
/// fn at nodes and leaves of the levels around it (with their paths), and replacements there.
TEST(Transform, RecursionHandsOverToTheExplicitStackAtItsDepth) {
  constexpr int kLast = static_cast<int>(details::kStructuralWalkRecursion);
  for (int depth : {kLast - 1, kLast, kLast + 1, kLast + 2, kLast + 3}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    const Expr chain = AddChain(depth);
    std::vector<int64_t> order;  // an IntImm's value, -1 for an Add
    StructuralVisit(chain, [&](const ObjectRef& node) {
      const auto* imm = node.as<IntImmNode>();
      order.push_back(imm != nullptr ? imm->value : -1);
    });
    std::vector<int64_t> expected{0};
    for (int i = 1; i <= depth; ++i) {
      expected.push_back(i);
      expected.push_back(-1);
    }
    EXPECT_EQ(order, expected);
    for (int level = kLast - 2; level <= std::min(depth, kLast + 2); ++level) {
      SCOPED_TRACE("level " + std::to_string(level));
      const Object* target = ChainAt(chain, level);
      // fn failing on the node of this level (an Add, or IntImm(0) at the bottom).
      auto fail_at = [target](const ObjectRef& node) -> ObjectRef {
        if (node.get() == target) FERRY_THROW(ValueError) << "here";
        return ObjectRef();
      };
      const std::string type = level == depth ? "test.IntImm" : "test.Add";
      EXPECT_EQ(
          ErrorOf([&] { StructuralTransform(chain, fail_at); }),
          "ValueError: StructuralTransform: at " + ChainPath(level) + " (" + type + "): here");
      EXPECT_EQ(ErrorOf([&] { StructuralVisit(chain, [&](const ObjectRef& n) { fail_at(n); }); }),
                "ValueError: StructuralVisit: at " + ChainPath(level) + " (" + type + "): here");
      if (level < depth) {
        // fn failing on the leaf this level's Add holds in `b`.
        const int64_t leaf = depth - level;
        EXPECT_EQ(
            ErrorOf([&] {
              StructuralTransform(chain, [leaf](const ObjectRef& node) -> ObjectRef {
                const auto* imm = node.as<IntImmNode>();
                if (imm != nullptr && imm->value == leaf) FERRY_THROW(KeyError) << "leaf";
                return ObjectRef();
              });
            }),
            "KeyError: StructuralTransform: at " + ChainPath(level) + ".b (test.IntImm): leaf");
        // Its leaf replaced: the levels above are copies, the subtree below the same objects.
        Expr out = StructuralTransform(chain, Replace(leaf, 1000 + leaf));
        for (int above = 0; above <= level; ++above) {
          EXPECT_NE(ChainAt(out, above), ChainAt(chain, above)) << above;
        }
        const auto* add = static_cast<const AddNode*>(ChainAt(out, level));
        EXPECT_EQ(add->b.as<IntImmNode>()->value, 1000 + leaf);
        EXPECT_EQ(add->a.get(), ChainAt(chain, level + 1));
      }
      // The node of this level replaced by a leaf: its parent's copy holds it.
      Expr out = StructuralTransform(chain, [target](const ObjectRef& node) -> ObjectRef {
        return node.get() == target ? ObjectRef(IntImm(-7)) : ObjectRef();
      });
      EXPECT_EQ(static_cast<const IntImmNode*>(ChainAt(out, level))->value, -7);
      EXPECT_EQ(static_cast<const AddNode*>(ChainAt(out, level - 1))->b.get(),
                static_cast<const AddNode*>(ChainAt(chain, level - 1))->b.get());
    }
  }
}

/// Runs `body` on a new thread whose stack has `bytes`, and waits for it.
bool RunOnThreadWithStack(size_t bytes, std::function<bool()> body) {
  struct Task {
    std::function<bool()> body;
    bool ok = false;
  } task{std::move(body)};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  const int made = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        auto* t = static_cast<Task*>(arg);
        t->ok = t->body();
        return nullptr;
      },
      &task);
  pthread_attr_destroy(&attr);
  if (made != 0) return false;
  pthread_join(thread, nullptr);
  return task.ok;
}

/// Deep graphs on a thread of 256 KiB: a 1e6-deep chain of Adds (native recursion down to its
/// limit, then the explicit stack), a 1e5-deep chain alternating an immutable node and an
/// Array (the recursion and nested runs of the explicit stack taking turns) and one of
/// immutable nodes linked through Any fields, visited and transformed (the deepest leaf
/// replaced). In a child process: an overflow would crash it.
TEST(Transform, DeepGraphsNeedLittleStack) {
  EXPECT_EXIT(
      {
        const bool ok = RunOnThreadWithStack(256 * 1024, [] {
          const Expr chain = AddChain(1000000);
          int64_t visited = 0;
          StructuralVisit(chain, [&](const ObjectRef&) { ++visited; });
          Expr out = StructuralTransform(chain, Replace(0, 42));
          if (visited != 2000001 || ChainAt(out, 1000000)->IsInstance<AddNode>()) return false;
          if (static_cast<const IntImmNode*>(ChainAt(out, 1000000))->value != 42) return false;
          // AttrsNode (immutable) -> `anything`: Array -> AttrsNode -> ... -> `maybe`: IntImm(7).
          ObjectPtr<AttrsNode> bottom = make_object<AttrsNode>();
          bottom->maybe = IntImm(7);
          ObjectRef graph(bottom);
          for (int i = 0; i < 100000; ++i) {
            ObjectPtr<AttrsNode> node = make_object<AttrsNode>();
            node->anything = Array<Any>{graph};
            graph = ObjectRef(node);
          }
          visited = 0;  // the AttrsNodes and the IntImm
          StructuralVisit(graph, [&](const ObjectRef& n) {
            visited += n.as<AttrsNode>() != nullptr || n.as<IntImmNode>() != nullptr;
          });
          ObjectRef rebuilt = StructuralTransform(graph, Replace(7, 8));
          const Object* node = rebuilt.get();
          for (int i = 0; i < 100000; ++i) {
            node = static_cast<const AttrsNode*>(node)
                       ->anything.cast<Array<Any>>()[0]
                       .cast<ObjectRef>()
                       .get();
          }
          if (visited != 100002 ||
              static_cast<const AttrsNode*>(node)->maybe.value().as<IntImmNode>()->value != 8) {
            return false;
          }
          // AttrsNodes linked through `anything` alone: each level's child read through its
          // type (the recursion's out-of-line path), 1e5 deep.
          graph = ObjectRef(bottom);
          for (int i = 0; i < 100000; ++i) {
            ObjectPtr<AttrsNode> link = make_object<AttrsNode>();
            link->anything = graph;
            graph = ObjectRef(link);
          }
          visited = 0;
          StructuralVisit(graph, [&](const ObjectRef& n) {
            visited += n.as<AttrsNode>() != nullptr || n.as<IntImmNode>() != nullptr;
          });
          rebuilt = StructuralTransform(graph, Replace(7, 9));
          node = rebuilt.get();
          for (int i = 0; i < 100000; ++i) {
            node = static_cast<const AttrsNode*>(node)->anything.cast<ObjectRef>().get();
          }
          return visited == 100002 &&
                 static_cast<const AttrsNode*>(node)->maybe.value().as<IntImmNode>()->value == 9;
        });
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

/// Callbacks of every form: StructuralVisit and StructuralTransform pass a function object's
/// address to the walk, and a function's through a pointer to it.
int64_t g_seen = 0;
void CountSeen(const ObjectRef&) { ++g_seen; }
ObjectRef DoubleImm(const ObjectRef& node) {
  const auto* imm = node.as<IntImmNode>();
  return imm != nullptr ? ObjectRef(IntImm(2 * imm->value)) : ObjectRef();
}

TEST(Transform, FunctionsAndFunctionObjectsAreCallbacks) {
  const Expr root = Add(IntImm(1), IntImm(2));
  g_seen = 0;
  StructuralVisit(root, CountSeen);  // a function
  void (*pointer)(const ObjectRef&) = CountSeen;
  StructuralVisit(root, pointer);  // a function pointer
  int64_t n = 0;
  const auto counter = [&n](const ObjectRef&) { ++n; };
  StructuralVisit(root, counter);  // a const function object
  struct Counter {
    int64_t n = 0;
    void operator()(const ObjectRef&) { ++n; }
  } mutable_counter;
  StructuralVisit(root, mutable_counter);  // by reference: its state is this object's
  EXPECT_EQ(g_seen, 6);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(mutable_counter.n, 3);
  auto sum = [](const Expr& e) {
    return e.as<AddNode>()->a.as<IntImmNode>()->value + e.as<AddNode>()->b.as<IntImmNode>()->value;
  };
  EXPECT_EQ(sum(StructuralTransform(root, DoubleImm)), 6);
  ObjectRef (*transform_pointer)(const ObjectRef&) = DoubleImm;
  EXPECT_EQ(sum(StructuralTransform(root, transform_pointer)), 6);
  EXPECT_EQ(sum(StructuralTransform(root, Replace(2, 5))), 6);  // a temporary function object
}

/// An immutable node held by a field read through its type (an Any field) is walked as one held
/// by an object pointer: its children first, replacements put in, errors with their path.
TEST(Transform, NodesInAnyFieldsAreWalkedLikeOthers) {
  ObjectPtr<AttrsNode> node = make_object<AttrsNode>();
  node->anything = Add(IntImm(1), IntImm(2));
  node->maybe = IntImm(3);
  ObjectRef attrs(node);
  std::vector<std::string> seen;
  StructuralVisit(attrs, [&](const ObjectRef& n) { seen.push_back(n->GetTypeKey()); });
  // maybe, items, table, shape (empty objects), then anything's Add after its children.
  EXPECT_EQ(seen,
            (std::vector<std::string>{"test.IntImm", "ferry.Array", "ferry.Map", "ferry.Shape",
                                      "test.IntImm", "test.IntImm", "test.Add", "test.Attrs"}));
  ObjectRef out = StructuralTransform(attrs, Replace(2, 20));
  const Expr& add = out.as<AttrsNode>()->anything.cast<Expr>();
  EXPECT_EQ(add.as<AddNode>()->b.as<IntImmNode>()->value, 20);
  EXPECT_TRUE(add.as<AddNode>()->a.same_as(node->anything.cast<Expr>().as<AddNode>()->a));
  EXPECT_EQ(ErrorOf([&] {
              StructuralVisit(attrs, [](const ObjectRef& n) {
                if (n.as<IntImmNode>() != nullptr && n.as<IntImmNode>()->value == 2) {
                  FERRY_THROW(ValueError) << "two";
                }
              });
            }),
            "ValueError: StructuralVisit: at root.anything.b (test.IntImm): two");
}

TEST(Transform, MillionDeepChainNeedsNoRecursion) {
  Expr chain = IntImm(0);
  for (int i = 1; i <= 1000000; ++i) chain = Add(chain, IntImm(i));
  int64_t visited = 0;
  StructuralVisit(chain, [&](const ObjectRef&) { ++visited; });
  EXPECT_EQ(visited, 2000001);
  // Unchanged: the same object back.
  EXPECT_TRUE(StructuralTransform(chain, Replace(-1, 0)).same_as(chain));
  // The deepest leaf changed: the whole spine is copied, every right leaf kept.
  Expr out = StructuralTransform(chain, Replace(0, 42));
  EXPECT_FALSE(out.same_as(chain));
  EXPECT_TRUE(out.as<AddNode>()->b.same_as(chain.as<AddNode>()->b));
  const Object* deepest = out.get();
  while (const auto* add = static_cast<const Object*>(deepest)->IsInstance<AddNode>()
                               ? static_cast<const AddNode*>(deepest)
                               : nullptr) {
    deepest = add->a.get();
  }
  EXPECT_EQ(static_cast<const IntImmNode*>(deepest)->value, 42);
}

TEST(Transform, FnDroppingNodesUnderTheWalkIsSafe) {
  // fn empties the outer list while the walk is inside its first item: the walk holds the
  // items it entered (before, it read the freed inner lists), and sees the emptied list after.
  auto make = [] {
    List<Any> outer;
    for (int64_t i = 0; i < 3; ++i) outer.push_back(List<Any>{IntImm(i)});
    return outer;
  };
  List<Any> outer = make();
  std::vector<std::string> seen;
  StructuralVisit(outer, [&](const ObjectRef& node) {
    seen.push_back(node->GetTypeKey());
    if (node.as<IntImmNode>() != nullptr) outer.clear();
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"test.IntImm", "ferry.List", "ferry.List"}));
  // A transform cannot pair results with children that are gone: a ValueError naming where.
  outer = make();
  std::string error = ErrorOf([&] {
    StructuralTransform(outer, [&](const ObjectRef& node) -> ObjectRef {
      if (node.as<IntImmNode>() == nullptr) return ObjectRef();
      outer.clear();
      return IntImm(7);
    });
  });
  EXPECT_NE(error.find("ValueError: StructuralTransform: at root (ferry.List): the object's "
                       "children changed during the walk"),
            std::string::npos)
      << error;
}

TEST(Transform, FnDroppingAListItemKeepsItAliveUntilTheWalkIsDone) {
  // The walk is at 2, under 1, which only the List holds; fn empties the List. 1 (and 2 under
  // it) must live until the walk is done with them: a List's items can be dropped under the
  // walk, so the walk holds its own reference to them.
  auto run = [](bool transform) {
    g_events.clear();
    List<Any> list{Tracked(1, Tracked(2))};
    auto fn = [&](const ObjectRef& node) {
      if (const auto* tracked = node.as<TrackedNode>()) {
        g_events.push_back("visit " + std::to_string(tracked->id));
        if (tracked->id == 2) list.clear();
      }
    };
    if (transform) {
      StructuralTransform(list, [&](const ObjectRef& node) -> ObjectRef {
        fn(node);
        return ObjectRef();
      });
    } else {
      StructuralVisit(list, fn);
    }
    return g_events;
  };
  const std::vector<std::string> expected{"visit 2", "visit 1", "free 1", "free 2"};
  // In a child process: a walk that let go of 1 too early would read freed memory.
  EXPECT_EXIT(
      {
        EXPECT_EQ(run(false), expected);
        EXPECT_EQ(run(true), expected);
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Transform, FnClearingAMutableNodesFieldUnderTheWalkIsSafe) {
  // As above through a `_type_mutable` node's field, written with SetAttr: `expr` holds
  // Add(IntImm(1), Add(IntImm(2), IntImm(3))) and nothing else holds the inner Add; fn clears
  // `expr` at IntImm(2). The walk still visits the rest of the inner Add and the outer one.
  auto run = [] {
    ObjectPtr<MutableNode> holder = make_object<MutableNode>();
    ObjectRef root(holder);
    holder->expr = Add(IntImm(1), Add(IntImm(2), IntImm(3)));
    std::vector<int64_t> seen;
    StructuralVisit(root, [&](const ObjectRef& node) {
      if (const auto* imm = node.as<IntImmNode>()) {
        seen.push_back(imm->value);
        if (imm->value == 2) SetAttr(root, "expr", Optional<Expr>());
      } else if (node.as<AddNode>() != nullptr) {
        seen.push_back(-1);
      }
    });
    EXPECT_FALSE(holder->expr.has_value());
    return seen;
  };
  // In a child process: a walk that let go of the inner Add too early would read freed memory.
  // The objects are gone before it exits (ctest runs it with the leak check on).
  EXPECT_EXIT(
      {
        EXPECT_EQ(run(), (std::vector<int64_t>{1, 2, 3, -1, -1}));
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

/// The visit's reference: children first, each object once (by address), over the types the
/// test below uses.
void PostOrder(const ObjectRef& node, std::set<const Object*>* seen,
               std::vector<const Object*>* out) {
  if (!node.defined() || !seen->insert(node.get()).second) return;
  if (const auto* add = node.as<AddNode>()) {
    PostOrder(add->a, seen, out);
    PostOrder(add->b, seen, out);
  } else if (const auto* let = node.as<LetNode>()) {
    PostOrder(let->var, seen, out);
    PostOrder(let->value, seen, out);
    PostOrder(let->body, seen, out);
  } else if (const auto* tracked = node.as<TrackedNode>()) {
    PostOrder(tracked->kid, seen, out);
  } else if (const auto* array = node.as<ArrayObj>()) {
    for (const Any& item : *array) PostOrder(item.cast<ObjectRef>(), seen, out);
  }
  out->push_back(node.get());
}

TEST(Transform, VisitDecidesEachChildByItsTypeAndCount) {
  // A visit decides a child of a node whose fields are all object pointers (Add, Tracked) by a
  // table by type index filled when the type is first met, and by the child's count: the same
  // type met shared and unique (FixedNode, IntImm), unique leaves and nodes, a leaf type
  // without fields (Opaque), nodes with other fields (Let, Var, IntImm), Arrays, and a chain
  // past the native recursion's depth; every object once, children first.
  const int deep_levels = static_cast<int>(details::kStructuralWalkRecursion) + 7;
  const ObjectRef fixed(make_object<FixedNode>(7));  // shared
  const Expr shared = IntImm(5);
  const ObjectRef opaque(make_object<OpaqueNode>());
  ObjectRef deep = Tracked(0, Array<ObjectRef>{fixed, ObjectRef(make_object<FixedNode>(8)),
                                               Add(shared, IntImm(6)), opaque});
  for (int i = 1; i <= deep_levels; ++i) {
    if (i % 5 == 0) {
      deep = Tracked(i, Array<ObjectRef>{ObjectRef(make_object<FixedNode>(i)), deep, fixed,
                                         Tracked(-i, ObjectRef(make_object<FixedNode>(-i)))});
    } else {
      deep = Tracked(i, deep);
    }
  }
  const ObjectRef root = Tracked(
      -1,
      Array<ObjectRef>{Add(Add(shared, Let(Var("x"), IntImm(1), shared)), Add(IntImm(2), shared)),
                       deep, Tracked(-2, fixed), opaque, Tracked(-3, Tracked(-4))});
  std::set<const Object*> seen;
  std::vector<const Object*> expected;
  PostOrder(root, &seen, &expected);
  std::vector<const Object*> order;
  StructuralVisit(root, [&](const ObjectRef& node) { order.push_back(node.get()); });
  EXPECT_EQ(order.size(), expected.size());
  EXPECT_TRUE(order == expected);
}

TEST(Transform, UniqueChildrenOfImmutableNodesAreNotCountedAgain) {
  // An immutable node keeps its children alive while the walk is inside it, so the walk takes
  // no reference of its own to a child only that node holds: fn sees its count as 1.
  Expr root = Add(IntImm(1), Add(IntImm(2), IntImm(3)));
  std::vector<int32_t> counts;
  StructuralVisit(root, [&](const ObjectRef& node) { counts.push_back(node.use_count()); });
  // The root: the caller's reference and the walk's memo.
  EXPECT_EQ(counts, (std::vector<int32_t>{1, 1, 1, 1, 2}));
  Array<Expr> array{IntImm(4)};
  counts.clear();
  StructuralVisit(array, [&](const ObjectRef& node) { counts.push_back(node.use_count()); });
  EXPECT_EQ(counts, (std::vector<int32_t>{1, 2}));
  // A List's items can be dropped by fn: the walk holds its own reference to them.
  List<Any> list{IntImm(5)};
  counts.clear();
  StructuralVisit(list, [&](const ObjectRef& node) { counts.push_back(node.use_count()); });
  EXPECT_EQ(counts, (std::vector<int32_t>{2, 2}));
}

TEST(Transform, ObjectPointerFieldsShareOneView) {
  // The walk reads a field whose view is ViewObjectPointerField as an object pointer at its
  // offset: that view must give what each type's own borrowed form (CopyToAnyView) gives.
  using details::FieldTypeOf;
  using details::ViewObjectPointerField;
  EXPECT_EQ(FieldTypeOf<ObjectRef>()->view, &ViewObjectPointerField);
  EXPECT_EQ(FieldTypeOf<Expr>()->view, &ViewObjectPointerField);
  EXPECT_EQ(FieldTypeOf<Array<Expr>>()->view, &ViewObjectPointerField);
  EXPECT_EQ((FieldTypeOf<Map<String, Any>>()->view), &ViewObjectPointerField);
  EXPECT_EQ(FieldTypeOf<List<Any>>()->view, &ViewObjectPointerField);
  EXPECT_EQ((FieldTypeOf<Dict<Any, Any>>()->view), &ViewObjectPointerField);
  EXPECT_EQ(FieldTypeOf<Optional<Expr>>()->view, &ViewObjectPointerField);
  EXPECT_EQ(FieldTypeOf<Function>()->view, &ViewObjectPointerField);
  EXPECT_NE(FieldTypeOf<Any>()->view, &ViewObjectPointerField);
  EXPECT_NE(FieldTypeOf<String>()->view, &ViewObjectPointerField);
  EXPECT_NE(FieldTypeOf<Optional<String>>()->view, &ViewObjectPointerField);
  EXPECT_NE(FieldTypeOf<int64_t>()->view, &ViewObjectPointerField);
  auto same_cell = [](const auto& value) {
    using T = std::decay_t<decltype(value)>;
    FerryAny shared{}, own{};
    EXPECT_TRUE(ViewObjectPointerField(&value, &shared));
    TypeTraitsOf<T>::CopyToAnyView(value, &own);
    EXPECT_EQ(shared.type_index, own.type_index);
    EXPECT_EQ(shared.v_obj, own.v_obj);
  };
  same_cell(Expr(IntImm(1)));
  same_cell(Expr());
  same_cell(Array<Expr>{IntImm(2)});
  same_cell(Optional<Expr>(IntImm(3)));
  same_cell(Optional<Expr>());
  same_cell(List<Any>{1});
}

TEST(Transform, MixedFieldsAreWalkedOrSkippedByKind) {
  // Number fields are skipped without a read; Optional, Array, Map, Shape and Any fields are
  // walked (strings are values), and a replacement goes into the field it came from.
  ObjectPtr<AttrsNode> node = make_object<AttrsNode>();
  node->flag = true;
  node->small = 3;
  node->ratio = 0.5;
  node->text = "text";
  node->name = String("a name longer than inline");
  node->maybe = IntImm(1);
  node->count = 4;
  node->items = Array<Expr>{IntImm(2)};
  node->table = Map<String, Expr>{{String("k"), IntImm(3)}};
  node->anything = IntImm(4);
  ObjectRef attrs(node);
  std::vector<int64_t> seen;
  StructuralVisit(attrs, [&](const ObjectRef& n) {
    if (const auto* imm = n.as<IntImmNode>()) seen.push_back(imm->value);
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3, 4}));
  ObjectRef out = StructuralTransform(attrs, Replace(4, 40));
  const auto* copy = out.as<AttrsNode>();
  ASSERT_NE(copy, nullptr);
  EXPECT_FALSE(out.same_as(attrs));
  EXPECT_EQ(copy->anything.cast<IntImm>()->value, 40);
  EXPECT_TRUE(copy->items.same_as(node->items));
  EXPECT_EQ(copy->small, 3);
  EXPECT_EQ(copy->count.value(), 4);
  EXPECT_EQ(copy->text, "text");
}

TEST(Transform, MapKeysBecomingEqualIsAnError) {
  Map<Any, Any> map{{IntImm(1), 10}, {IntImm(2), 20}};
  Expr zero = IntImm(0);
  std::string error = ErrorOf([&] {
    StructuralTransform(map, [&](const ObjectRef& node) -> ObjectRef {
      return node.as<IntImmNode>() != nullptr ? zero : ObjectRef();
    });
  });
  EXPECT_NE(error.find("ValueError: StructuralTransform: at root (ferry.Map): two keys of the "
                       "map become the same key"),
            std::string::npos)
      << error;
}

}  // namespace

FERRY_REGISTER_NODE_TYPE(TrackedNode);
