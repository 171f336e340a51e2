// Tests of ferry/object.h and ferry/memory.h: reference counting, the type registry, casting,
// copy-on-write, allocation failure and deep release.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "operator_new_counter.h"
#include "test_util.h"

namespace {

using namespace ferry;
using ferry_test::ExpectError;

// Live-instance counter shared by the test node types, to prove destruction happens exactly once.
std::atomic<int> live_nodes{0};

// A 3-level hierarchy: Base (2 reserved slots, no overflow) -> Mid (1 slot) -> Leaf.
class BaseNode : public Object {
 public:
  BaseNode() { ++live_nodes; }
  BaseNode(const BaseNode& other) : Object(other), value(other.value) { ++live_nodes; }
  ~BaseNode() { --live_nodes; }
  int value = 0;
  static constexpr const char* _type_key = "test.Base";
  static constexpr int32_t _type_child_slots = 3;
  static constexpr bool _type_child_slots_can_overflow = false;
  FERRY_DECLARE_BASE_OBJECT_INFO(BaseNode, Object);
};
class Base : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Base, ObjectRef, BaseNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(BaseNode);
};

class MidNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "test.Mid";
  static constexpr int32_t _type_child_slots = 1;
  static constexpr bool _type_child_slots_can_overflow = true;
  FERRY_DECLARE_BASE_OBJECT_INFO(MidNode, BaseNode);
};
class Mid : public Base {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Mid, Base, MidNode);
};

class LeafNode : public MidNode {
 public:
  static constexpr const char* _type_key = "test.Leaf";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LeafNode, MidNode);
};
class Leaf : public Mid {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Leaf, Mid, LeafNode);
};

// Base's 3 slots: Mid takes 2 (itself + 1 child slot), Sibling takes the last one.
class SiblingNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "test.Sibling";
  FERRY_DECLARE_FINAL_OBJECT_INFO(SiblingNode, BaseNode);
};
// Base does not allow overflow, so a fourth index cannot be found for this one.
class ExhaustedNode : public BaseNode {
 public:
  static constexpr const char* _type_key = "test.Exhausted";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ExhaustedNode, BaseNode);
};
// Mid's single slot is taken by Leaf and Base allows no overflow: nowhere to put this one.
class EscapeNode : public MidNode {
 public:
  static constexpr const char* _type_key = "test.Escape";
  FERRY_DECLARE_FINAL_OBJECT_INFO(EscapeNode, MidNode);
};

// Open (1 slot, overflow allowed) -> OpenFill takes the slot; Overflow and its child land past
// the range and IsInstance must use the ancestor chain.
class OpenNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Open";
  static constexpr int32_t _type_child_slots = 1;
  FERRY_DECLARE_BASE_OBJECT_INFO(OpenNode, Object);
};
class OpenFillNode : public OpenNode {
 public:
  static constexpr const char* _type_key = "test.OpenFill";
  FERRY_DECLARE_FINAL_OBJECT_INFO(OpenFillNode, OpenNode);
};
class OverflowNode : public OpenNode {
 public:
  static constexpr const char* _type_key = "test.Overflow";
  static constexpr int32_t _type_child_slots = 0;
  FERRY_DECLARE_BASE_OBJECT_INFO(OverflowNode, OpenNode);
};
class OverflowChildNode : public OverflowNode {
 public:
  static constexpr const char* _type_key = "test.OverflowChild";
  FERRY_DECLARE_FINAL_OBJECT_INFO(OverflowChildNode, OverflowNode);
};

// Closed (4 slots, no overflow) -> Inner (1 slot, overflow allowed) -> InnerFill. InnerOver
// overflows Inner, so it must land in Closed's free slots.
class ClosedNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Closed";
  static constexpr int32_t _type_child_slots = 4;
  static constexpr bool _type_child_slots_can_overflow = false;
  FERRY_DECLARE_BASE_OBJECT_INFO(ClosedNode, Object);
};
class InnerNode : public ClosedNode {
 public:
  static constexpr const char* _type_key = "test.Inner";
  static constexpr int32_t _type_child_slots = 1;
  static constexpr bool _type_child_slots_can_overflow = true;
  FERRY_DECLARE_BASE_OBJECT_INFO(InnerNode, ClosedNode);
};
class InnerFillNode : public InnerNode {
 public:
  static constexpr const char* _type_key = "test.InnerFill";
  FERRY_DECLARE_FINAL_OBJECT_INFO(InnerFillNode, InnerNode);
};
class InnerOverNode : public InnerNode {
 public:
  static constexpr const char* _type_key = "test.InnerOver";
  FERRY_DECLARE_FINAL_OBJECT_INFO(InnerOverNode, InnerNode);
};

class RaceNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Race";
  FERRY_DECLARE_FINAL_OBJECT_INFO(RaceNode, Object);
};

// Registers the hierarchy in a fixed order, so index layout does not depend on test order.
void RegisterHierarchy() {
  BaseNode::RuntimeTypeIndex();
  MidNode::RuntimeTypeIndex();
  LeafNode::RuntimeTypeIndex();
  SiblingNode::RuntimeTypeIndex();
}

class UnrelatedNode : public Object {
 public:
  static constexpr const char* _type_key = "test.Unrelated";
  FERRY_DECLARE_FINAL_OBJECT_INFO(UnrelatedNode, Object);
};

TEST(ObjectRef, RefcountsAreExactAfterCopyMoveAndReset) {
  Base a(make_object<BaseNode>());
  EXPECT_EQ(a.use_count(), 1);
  {
    Base b = a;
    EXPECT_EQ(a.use_count(), 2);
    Base c = std::move(b);
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move): moved-from is null
    Base d;
    d = c;
    EXPECT_EQ(a.use_count(), 3);
    d = Base();
    EXPECT_EQ(a.use_count(), 2);
  }
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_TRUE(a.unique());
  ObjectPtr<BaseNode> ptr = make_object<BaseNode>();
  ObjectPtr<Object> as_object = ptr;
  EXPECT_EQ(ptr.use_count(), 2);
  as_object.reset();
  EXPECT_EQ(ptr.use_count(), 1);
  EXPECT_EQ(as_object.use_count(), 0);
}

TEST(ObjectRef, ObjectsAreDestroyedExactlyOnce) {
  int before = live_nodes;
  {
    Base a(make_object<BaseNode>());
    Base b = a;
    EXPECT_EQ(live_nodes, before + 1);
  }
  EXPECT_EQ(live_nodes, before);
}

TEST(ObjectRef, CopyingAnObjectDoesNotCopyItsCount) {
  ObjectPtr<BaseNode> a = make_object<BaseNode>();
  ObjectPtr<BaseNode> a2 = a;
  ObjectPtr<BaseNode> b = make_object<BaseNode>(*a);
  EXPECT_EQ(a.use_count(), 2);
  EXPECT_EQ(b.use_count(), 1);
  EXPECT_EQ(b->type_index(), BaseNode::RuntimeTypeIndex());
}

TEST(ObjectRef, DefinedSameAsAndGetRef) {
  Base empty;
  EXPECT_FALSE(empty.defined());
  EXPECT_EQ(empty.use_count(), 0);
  EXPECT_EQ(empty.as<BaseNode>(), nullptr);
  Base a(make_object<BaseNode>());
  Base b(make_object<BaseNode>());
  EXPECT_TRUE(a.same_as(a));
  EXPECT_FALSE(a.same_as(b));
  EXPECT_TRUE(a == Base(a));
  EXPECT_TRUE(a != b);
  Base again = GetRef<Base>(a.get());
  EXPECT_TRUE(again.same_as(a));
  EXPECT_EQ(a.use_count(), 2);
  ObjectPtr<BaseNode> ptr = GetObjectPtr<BaseNode>(a.get());
  EXPECT_EQ(a.use_count(), 3);
}

TEST(TypeRegistry, KeysAndIndicesAgree) {
  RegisterHierarchy();
  EXPECT_STREQ(Leaf(make_object<LeafNode>())->GetTypeKey(), "test.Leaf");
  int32_t index = -1;
  ASSERT_EQ(FerryTypeKeyToIndex("test.Leaf", &index), 0);
  EXPECT_EQ(index, LeafNode::RuntimeTypeIndex());
  const char* key = nullptr;
  ASSERT_EQ(FerryTypeIndexToKey(index, &key), 0);
  EXPECT_STREQ(key, "test.Leaf");
  EXPECT_GE(index, kFerryDynamicObjectBegin);
  EXPECT_EQ(StringObj::RuntimeTypeIndex(), kFerryString);
  ASSERT_EQ(FerryTypeKeyToIndex("ferry.String", &index), 0);
  EXPECT_EQ(index, kFerryString);
}

TEST(TypeRegistry, ChildSlotsFormContiguousRanges) {
  RegisterHierarchy();
  const int32_t base = BaseNode::RuntimeTypeIndex();
  const int32_t mid = MidNode::RuntimeTypeIndex();
  const int32_t leaf = LeafNode::RuntimeTypeIndex();
  const int32_t sibling = SiblingNode::RuntimeTypeIndex();
  EXPECT_EQ(mid, base + 1);
  EXPECT_EQ(leaf, mid + 1);
  // Sibling takes the last of Base's three slots.
  EXPECT_EQ(sibling, base + 3);
  const FerryTypeInfo* info = nullptr;
  ASSERT_EQ(FerryTypeGetInfo(leaf, &info), 0);
  EXPECT_EQ(info->type_depth, 3);
  EXPECT_EQ(LeafNode::_type_depth, 3);
  EXPECT_EQ(info->type_ancestors[0], kFerryObject);
  EXPECT_EQ(info->type_ancestors[1], base);
  EXPECT_EQ(info->type_ancestors[2], mid);
}

/// A base type that no test makes an object of: its index is not known until IsInstance asks.
class UnseenBaseNode : public Object {
 public:
  static constexpr const char* _type_key = "test.UnseenBase";
  static constexpr int32_t _type_child_slots = 200;
  FERRY_DECLARE_BASE_OBJECT_INFO(UnseenBaseNode, Object);
};

TEST(TypeRegistry, IsInstanceOfATypeNotYetRegistered) {
  // IsInstance reads T's index without registering it first; before RuntimeTypeIndex ran the
  // hint must match no object, whatever its index (200 slots would cover every builtin one).
  EXPECT_EQ(UnseenBaseNode::_TypeIndexHint(), details::kTypeIndexUnseen);
  ObjectRef s = String("x");
  ObjectPtr<Object> leaf = make_object<LeafNode>();
  EXPECT_FALSE(s->IsInstance<UnseenBaseNode>());
  EXPECT_FALSE(leaf->IsInstance<UnseenBaseNode>());
  EXPECT_EQ(UnseenBaseNode::_TypeIndexHint(), UnseenBaseNode::RuntimeTypeIndex());
  EXPECT_FALSE(s->IsInstance<UnseenBaseNode>());
  EXPECT_TRUE(make_object<UnseenBaseNode>()->IsInstance<UnseenBaseNode>());
  EXPECT_EQ(LeafNode::_TypeIndexHint(), LeafNode::RuntimeTypeIndex());
}

TEST(TypeRegistry, IsInstanceAcrossThreeLevels) {
  RegisterHierarchy();
  Object* objects[] = {nullptr, nullptr, nullptr, nullptr};
  ObjectPtr<Object> base = make_object<BaseNode>();
  ObjectPtr<Object> mid = make_object<MidNode>();
  ObjectPtr<Object> leaf = make_object<LeafNode>();
  ObjectPtr<Object> sibling = make_object<SiblingNode>();  // the last slot of Base
  objects[0] = base.get();
  objects[1] = mid.get();
  objects[2] = leaf.get();
  objects[3] = sibling.get();
  for (Object* obj : objects) {
    EXPECT_TRUE(obj->IsInstance<Object>());
    EXPECT_TRUE(obj->IsInstance<BaseNode>()) << obj->GetTypeKey();
    EXPECT_FALSE(obj->IsInstance<UnrelatedNode>()) << obj->GetTypeKey();
  }
  EXPECT_FALSE(base->IsInstance<MidNode>());
  EXPECT_TRUE(mid->IsInstance<MidNode>());
  EXPECT_TRUE(leaf->IsInstance<MidNode>());
  EXPECT_FALSE(sibling->IsInstance<MidNode>());
  EXPECT_TRUE(leaf->IsInstance<LeafNode>());
  EXPECT_FALSE(mid->IsInstance<LeafNode>());
  EXPECT_FALSE(sibling->IsInstance<LeafNode>());
  EXPECT_TRUE(sibling->IsInstance<SiblingNode>());
  ObjectPtr<Object> unrelated = make_object<UnrelatedNode>();
  EXPECT_FALSE(unrelated->IsInstance<BaseNode>());
}

TEST(TypeRegistry, OverflowedDescendantsStayCorrect) {
  ASSERT_GT(OpenFillNode::RuntimeTypeIndex(), 0);  // takes Open's only slot
  ObjectPtr<Object> fill = make_object<OpenFillNode>();
  ObjectPtr<Object> over = make_object<OverflowNode>();
  ObjectPtr<Object> child = make_object<OverflowChildNode>();
  const int32_t open = OpenNode::RuntimeTypeIndex();
  EXPECT_EQ(fill->type_index(), open + 1) << "the last reserved slot";
  EXPECT_GT(over->type_index(), open + OpenNode::_type_child_slots);
  EXPECT_TRUE(fill->IsInstance<OpenNode>());
  EXPECT_TRUE(over->IsInstance<OpenNode>());
  EXPECT_TRUE(over->IsInstance<OverflowNode>());
  EXPECT_FALSE(over->IsInstance<OverflowChildNode>());
  EXPECT_FALSE(over->IsInstance<OpenFillNode>());
  EXPECT_TRUE(child->IsInstance<OverflowNode>());
  EXPECT_TRUE(child->IsInstance<OpenNode>());
  EXPECT_FALSE(child->IsInstance<BaseNode>());
  ObjectPtr<Object> unrelated = make_object<UnrelatedNode>();
  EXPECT_FALSE(unrelated->IsInstance<OverflowNode>());
  EXPECT_FALSE(unrelated->IsInstance<OpenNode>());
}

TEST(TypeRegistry, OverflowStaysInsideAClosedAncestor) {
  ASSERT_GT(InnerFillNode::RuntimeTypeIndex(), 0);
  const int32_t closed = ClosedNode::RuntimeTypeIndex();
  ObjectPtr<Object> over = make_object<InnerOverNode>();
  // Inner took closed+1..closed+2; InnerOver must not leave Closed's range.
  EXPECT_EQ(over->type_index(), closed + 3);
  EXPECT_TRUE(over->IsInstance<ClosedNode>());
  EXPECT_TRUE(over->IsInstance<InnerNode>());
  EXPECT_FALSE(over->IsInstance<InnerFillNode>());
  ObjectPtr<Object> fill = make_object<InnerFillNode>();
  EXPECT_FALSE(fill->IsInstance<InnerOverNode>());
}

TEST(TypeRegistry, GrandchildCannotEscapeAClosedAncestor) {
  RegisterHierarchy();
  try {
    EscapeNode::RuntimeTypeIndex();
    FAIL() << "a grandchild of a full no-overflow type must not be placed outside its range";
  } catch (const Error& e) {
    EXPECT_NE(e.message().view().find("test.Escape"), std::string_view::npos) << e.what();
    EXPECT_NE(e.message().view().find("ancestor 'test.Base'"), std::string_view::npos) << e.what();
  }
}

TEST(TypeRegistry, ExhaustedSlotsAreAnErrorNamingBothTypes) {
  RegisterHierarchy();
  ASSERT_GT(SiblingNode::RuntimeTypeIndex(), 0);  // Base's slots are now all used
  try {
    make_object<ExhaustedNode>();
    FAIL() << "registering past the reserved slots must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "RuntimeError");
    EXPECT_NE(e.message().view().find("test.Exhausted"), std::string_view::npos) << e.what();
    EXPECT_NE(e.message().view().find("test.Base"), std::string_view::npos) << e.what();
  }
  // The failed registration is retried (and fails again), never half-registered.
  EXPECT_THROW(ExhaustedNode::RuntimeTypeIndex(), Error);
  int32_t index = 0;
  EXPECT_EQ(FerryTypeKeyToIndex("test.Exhausted", &index), -1);
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  FerryObjectDecRef(err);
}

TEST(TypeRegistry, SameKeyWithAnotherParentIsAnError) {
  int32_t index = -1;
  ASSERT_EQ(FerryTypeGetOrAllocIndex("test.Twice", -1, kFerryObject, 0, 1, &index), 0);
  int32_t again = -1;
  ASSERT_EQ(FerryTypeGetOrAllocIndex("test.Twice", -1, kFerryObject, 0, 1, &again), 0);
  EXPECT_EQ(again, index);
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.Twice", -1, BaseNode::RuntimeTypeIndex(), 0, 1, &again),
            -1);
  try {
    details::ThrowRaised();
  } catch (const Error& e) {
    EXPECT_NE(e.message().view().find("'test.Twice' is already registered with parent "
                                      "'ferry.Object'"),
              std::string_view::npos)
        << e.what();
    EXPECT_NE(e.message().view().find("test.Base"), std::string_view::npos) << e.what();
  }
}

TEST(TypeRegistry, SameKeyWithOtherChildSlotsIsAnError) {
  // A class that declares slots the first registration did not reserve would see unrelated
  // types registered after it as its subtypes.
  int32_t index = -1, again = -1;
  ASSERT_EQ(FerryTypeGetOrAllocIndex("test.Slots", -1, kFerryObject, 0, 1, &index), 0);
  ASSERT_EQ(FerryTypeGetOrAllocIndex("test.Slots", -1, kFerryObject, 0, 1, &again), 0);
  EXPECT_EQ(again, index);
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.Slots", -1, kFerryObject, 4, 0, &again), -1);
  ExpectError([] { details::ThrowRaised(); }, "RuntimeError",
              {"'test.Slots' is already registered with 0 child slots (can overflow)",
               "again with 4 child slots (cannot overflow)"});
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.Slots", -1, kFerryObject, 0, 0, &again), -1);
  EXPECT_THROW(details::ThrowRaised(), Error);
}

TEST(TypeRegistry, AbsurdChildSlotCountsAreValueErrors) {
  int32_t index = -1;
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.Huge", -1, kFerryObject, INT32_MAX, 1, &index), -1);
  ExpectError([] { details::ThrowRaised(); }, "ValueError",
              {"'test.Huge': num_child_slots must be in [0, "});
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.Huge", -1, kFerryObject, -1, 1, &index), -1);
  EXPECT_THROW(details::ThrowRaised(), Error);
  EXPECT_EQ(FerryTypeKeyToIndex("test.Huge", &index), -1) << "nothing was registered";
  EXPECT_THROW(details::ThrowRaised(), Error);
}

TEST(TypeRegistry, UnknownKeysAndIndicesAreErrors) {
  int32_t index = 0;
  EXPECT_EQ(FerryTypeKeyToIndex("no.such.Type", &index), -1);
  EXPECT_THROW(details::ThrowRaised(), Error);
  const char* key = nullptr;
  EXPECT_EQ(FerryTypeIndexToKey(1 << 20, &key), -1);
  EXPECT_THROW(details::ThrowRaised(), Error);
  EXPECT_EQ(FerryTypeGetOrAllocIndex("test.BadParent", -1, 99999, 0, 1, &index), -1);
  EXPECT_THROW(details::ThrowRaised(), Error);
}

TEST(TypeRegistry, ConcurrentFirstUseAllocatesOnce) {
  std::vector<int32_t> seen(8, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&seen, t] {
      // Each thread registers a distinct key through the C ABI and the shared one via C++.
      std::string key = "test.Race" + std::to_string(t);
      int32_t index = -1;
      FerryTypeGetOrAllocIndex(key.c_str(), -1, kFerryObject, 0, 1, &index);
      seen[t] = RaceNode::RuntimeTypeIndex();
      EXPECT_GE(index, kFerryDynamicObjectBegin);
    });
  }
  for (auto& th : threads) th.join();
  for (int32_t index : seen) EXPECT_EQ(index, seen[0]);
}

TEST(Casting, AsReturnsNullOnMismatch) {
  Base leaf(make_object<LeafNode>());
  EXPECT_NE(leaf.as<MidNode>(), nullptr);
  EXPECT_NE(leaf.as<LeafNode>(), nullptr);
  EXPECT_EQ(leaf.as<SiblingNode>(), nullptr);
  EXPECT_EQ(leaf.as<UnrelatedNode>(), nullptr);
}

TEST(Casting, DowncastNamesBothKeysOnFailure) {
  ObjectRef sibling(make_object<SiblingNode>());
  EXPECT_TRUE(Downcast<Base>(sibling).defined());
  try {
    Downcast<Mid>(sibling);
    FAIL() << "Downcast must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(), "Downcast from test.Sibling to test.Mid failed");
  }
  // A null reference casts to a nullable type, and fails for a non-nullable one.
  EXPECT_FALSE(Downcast<Mid>(ObjectRef()).defined());
  try {
    Downcast<String>(ObjectRef());
    FAIL() << "Downcast of null to String must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "Downcast from None to ferry.String failed");
  }
}

TEST(CopyOnWrite, CopiesOnlyWhenShared) {
  Base a(make_object<BaseNode>());
  const BaseNode* original = a.get();
  a.CopyOnWrite()->value = 1;
  EXPECT_EQ(a.get(), original) << "a unique reference mutates in place";
  Base b = a;
  b.CopyOnWrite()->value = 2;
  EXPECT_NE(b.get(), original) << "a shared reference copies";
  EXPECT_EQ(a->value, 1) << "the mutation is not visible through the other handle";
  EXPECT_EQ(b->value, 2);
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(b.use_count(), 1);
  Base null;
  EXPECT_THROW(null.CopyOnWrite(), Error);
}

std::atomic<int> thrower_constructed{0};
class ThrowingNode : public Object {
 public:
  explicit ThrowingNode(bool fail) : member(make_object<BaseNode>()) {
    ++thrower_constructed;
    if (fail) throw std::runtime_error("constructor failed");
  }
  Base member;
  static constexpr const char* _type_key = "test.Throwing";
  FERRY_DECLARE_FINAL_OBJECT_INFO(ThrowingNode, Object);
};

TEST(MakeObject, ThrowingConstructorLeaksNothing) {
  // AddressSanitizer's leak check covers the raw block; the counter covers the members.
  int before = live_nodes;
  EXPECT_THROW(make_object<ThrowingNode>(true), std::runtime_error);
  EXPECT_EQ(live_nodes, before);
  ObjectPtr<ThrowingNode> ok = make_object<ThrowingNode>(false);
  EXPECT_EQ(live_nodes, before + 1);
  ok.reset();
  EXPECT_EQ(live_nodes, before);
}

// A node with a trailing array of ints in the same block.
class IntsNode : public Object {
 public:
  explicit IntsNode(size_t n) : size(n) {
    for (size_t i = 0; i < n; ++i) data()[i] = static_cast<int64_t>(i * i);
  }
  int64_t* data() { return reinterpret_cast<int64_t*>(this + 1); }
  size_t size;
  static constexpr const char* _type_key = "test.Ints";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntsNode, Object);
};

TEST(MakeObject, InplaceArrayObjectHoldsItsPayload) {
  ObjectPtr<IntsNode> n = make_inplace_array_object<IntsNode, int64_t>(1000, 1000);
  ASSERT_EQ(n->size, 1000u);
  EXPECT_EQ(n->data()[999], 999 * 999);
  EXPECT_EQ(n->type_index(), IntsNode::RuntimeTypeIndex());
  EXPECT_THROW((make_inplace_array_object<IntsNode, int64_t>(SIZE_MAX / 4, 0)), Error);
}

// Blocks come from malloc: a size no machine has (2^60 bytes, no overflow) is std::bad_alloc,
// as from operator new, with nothing constructed. ASan and TSan end the process on such a
// request by design (allocation-size-too-big), for operator new as for malloc, so the check
// runs in the builds without them.
TEST(MakeObject, OutOfMemoryIsBadAlloc) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_THROW((make_inplace_array_object<IntsNode, int64_t>(size_t{1} << 57, 0)), std::bad_alloc);
#endif
  ObjectPtr<IntsNode> n = make_inplace_array_object<IntsNode, int64_t>(3, 3);
  EXPECT_EQ(n->data()[2], 4);
}

// Trivially destructible: its deleter frees it at once, without the release-depth guard.
class PlainNode : public Object {
 public:
  int64_t value = 7;
  static constexpr const char* _type_key = "test.Plain";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PlainNode, Object);
};
static_assert(std::is_trivially_destructible_v<PlainNode>);

TEST(MakeObject, NewObjectsStartWithOneReferenceAndFreeOnTheLastDrop) {
  // The first reference is taken without an atomic instruction; the count must still be
  // exact, and AddressSanitizer's leak check sees a missed free.
  ObjectPtr<PlainNode> p = make_object<PlainNode>();
  EXPECT_EQ(p.use_count(), 1);
  ObjectPtr<PlainNode> q = p;
  EXPECT_EQ(p.use_count(), 2);
  p.reset();
  EXPECT_EQ(q.use_count(), 1);
  EXPECT_EQ(q->value, 7);
  ObjectPtr<BaseNode> b = make_object<BaseNode>();
  EXPECT_EQ(b.use_count(), 1);
}

// Bigger than a cached block: its memory comes from malloc.
class WideNode : public Object {
 public:
  int64_t values[8] = {};
  static constexpr const char* _type_key = "test.Wide";
  FERRY_DECLARE_FINAL_OBJECT_INFO(WideNode, Object);
};

// One node per size class of the block cache above the 24-byte PlainNode.
struct Class40Node : Object {
  int64_t values[3] = {};
  static constexpr const char* _type_key = "test.Class40";
  FERRY_DECLARE_FINAL_OBJECT_INFO(Class40Node, Object);
};
struct Class56Node : Object {
  int64_t values[5] = {};
  static constexpr const char* _type_key = "test.Class56";
  FERRY_DECLARE_FINAL_OBJECT_INFO(Class56Node, Object);
};
struct Class64Node : Object {
  int64_t values[6] = {};
  static constexpr const char* _type_key = "test.Class64";
  FERRY_DECLARE_FINAL_OBJECT_INFO(Class64Node, Object);
};
static_assert(sizeof(PlainNode) == 24 && sizeof(Class40Node) == 40 && sizeof(Class56Node) == 56 &&
              sizeof(Class64Node) == 64);

TEST(MakeObject, SmallObjectsReuseTheBlockOfOneReleasedOnTheSameThread) {
  static_assert(details::kCachedBlock<PlainNode> && details::kCachedBlock<ThrowingNode>);
  static_assert(!details::kCachedBlock<WideNode> && sizeof(WideNode) > details::kCachedBlockBytes);
  // On a fresh thread (empty caches), a thousand make+drops of objects of each size class take
  // one block of each class from operator new, and reuse it; WideNode comes from malloc. (The
  // types register first: registration allocates.)
  for (int32_t index : {PlainNode::RuntimeTypeIndex(), Class40Node::RuntimeTypeIndex(),
                        Class56Node::RuntimeTypeIndex(), Class64Node::RuntimeTypeIndex(),
                        WideNode::RuntimeTypeIndex()}) {
    EXPECT_GE(index, kFerryDynamicObjectBegin);
  }
  std::thread([] {
    const int64_t before = t_operator_new_calls;
    for (int i = 0; i < 1000; ++i) {
      ObjectPtr<PlainNode> p24 = make_object<PlainNode>();  // 24 bytes: the 24-byte class
      ObjectPtr<Class40Node> p40 = make_object<Class40Node>();
      ObjectPtr<Class56Node> p56 = make_object<Class56Node>();
      ObjectPtr<Class64Node> p64 = make_object<Class64Node>();
      ObjectPtr<WideNode> wide = make_object<WideNode>();
      ASSERT_EQ(p24->value + p40->values[2] + p56->values[4] + p64->values[5], 7);
    }
    EXPECT_EQ(t_operator_new_calls - before, 4);
    // A String's 64-byte block is the next 64-byte object's.
    const void* first = String("twenty bytes of text").get();
    EXPECT_EQ(static_cast<const void*>(make_object<Class64Node>().get()), first);
  }).join();
  // A constructor that throws gives its cached block back (the sanitizer's leak check).
  EXPECT_THROW(make_object<ThrowingNode>(true), std::runtime_error);
  EXPECT_EQ(make_object<ThrowingNode>(false)->type_index(), ThrowingNode::RuntimeTypeIndex());
  // Blocks made on one thread and released on another (the sanitizer builds check the moves and
  // that the caches are freed at thread exit).
  std::vector<ObjectPtr<PlainNode>> made;
  std::thread producer([&made] {
    for (int i = 0; i < 1000; ++i) made.push_back(make_object<PlainNode>());
  });
  producer.join();
  std::thread consumer([&made] {
    for (const ObjectPtr<PlainNode>& p : made) EXPECT_EQ(p->value, 7);
    made.clear();
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(make_object<PlainNode>()->value, 7);
  });
  consumer.join();
  ObjectPtr<WideNode> wide = make_object<WideNode>();
  EXPECT_EQ(wide->values[7], 0);
}

TEST(Threads, ConcurrentCopiesKeepTheCountExact) {
  int before = live_nodes;
  Base shared(make_object<BaseNode>());
  constexpr int kThreads = 8;
  constexpr int kCopies = 1000000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&shared] {
      for (int i = 0; i < kCopies; ++i) {
        Base copy = shared;
        (void)copy;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(shared.use_count(), 1);
  EXPECT_EQ(live_nodes, before + 1);
  // The last references are dropped on several threads at once: exactly one destruction.
  std::vector<Base> holders(kThreads, shared);
  shared = Base();
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&holders, t] { holders[t] = Base(); });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(live_nodes, before);
}

// The release is one atomic decrement, with no load of the count before it (docs/benchmarks.md,
// "ObjectRef release"): the deleter runs once, after the decrement that took the count to 0,
// whether the object was shared or not.
uint32_t count_seen_by_deleter = 99;
int deleter_runs = 0;
void RecordingDeleter(FerryObject* self) {
  count_seen_by_deleter = __atomic_load_n(&self->ref_counter, __ATOMIC_RELAXED);
  ++deleter_runs;
}

TEST(Release, TheLastDropDecrementsToZeroThenDeletes) {
  FerryObject header{};
  header.ref_counter = 1;
  header.deleter = &RecordingDeleter;
  deleter_runs = 0;
  FerryObjectDecRefInline(&header);  // never shared
  EXPECT_EQ(deleter_runs, 1);
  EXPECT_EQ(count_seen_by_deleter, 0u);
  header.ref_counter = 1;
  FerryObjectIncRefInline(&header);
  FerryObjectDecRefInline(&header);
  EXPECT_EQ(deleter_runs, 1) << "a drop that leaves an owner must not delete";
  EXPECT_EQ(header.ref_counter, 1u);
  FerryObjectDecRefInline(&header);  // shared once, now the last owner
  EXPECT_EQ(deleter_runs, 2);
  EXPECT_EQ(count_seen_by_deleter, 0u);
}

// A singly linked list node: releasing the head releases the whole chain.
class LinkNode : public Object {
 public:
  LinkNode() { ++live_nodes; }
  ~LinkNode() { --live_nodes; }
  ObjectRef next;
  static constexpr const char* _type_key = "test.Link";
  FERRY_DECLARE_FINAL_OBJECT_INFO(LinkNode, Object);
};

TEST(Release, MillionDeepChainFreesWithoutStackOverflow) {
  int before = live_nodes;
  ObjectRef head;
  constexpr int kDepth = 1000000;
  for (int i = 0; i < kDepth; ++i) {
    ObjectPtr<LinkNode> n = make_object<LinkNode>();
    n->next = std::move(head);
    head = ObjectRef(std::move(n));
  }
  EXPECT_EQ(live_nodes, before + kDepth);
  head = ObjectRef();
  EXPECT_EQ(live_nodes, before);
}

// A chain whose links are trivially destructible objects held by non-trivial ones: the plain
// objects are freed at once, inside the guarded frees of their owners.
class PairLinkNode : public Object {
 public:
  PairLinkNode() { ++live_nodes; }
  ~PairLinkNode() { --live_nodes; }
  ObjectRef plain;
  ObjectRef next;
  static constexpr const char* _type_key = "test.PairLink";
  FERRY_DECLARE_FINAL_OBJECT_INFO(PairLinkNode, Object);
};

TEST(Release, DeepChainWithPlainObjectsFreesEverything) {
  int before = live_nodes;
  ObjectRef head;
  for (int i = 0; i < 1000000; ++i) {
    ObjectPtr<PairLinkNode> n = make_object<PairLinkNode>();
    n->plain = ObjectRef(make_object<PlainNode>());
    n->next = std::move(head);
    head = ObjectRef(std::move(n));
  }
  head = ObjectRef();
  EXPECT_EQ(live_nodes, before);  // and LeakSanitizer checks the PlainNodes
}

TEST(Release, DeepChainsOnManyThreads) {
  int before = live_nodes;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      ObjectRef head;
      for (int i = 0; i < 100000; ++i) {
        ObjectPtr<LinkNode> n = make_object<LinkNode>();
        n->next = std::move(head);
        head = ObjectRef(std::move(n));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(live_nodes, before);
}

}  // namespace

namespace {
TEST(DCheck, OnWithoutNdebugAndNotEvaluatedWithIt) {
  int evaluated = 0;
  FERRY_DCHECK(++evaluated > 0);
#ifdef NDEBUG
  EXPECT_EQ(evaluated, 0) << "a release build compiles FERRY_DCHECK out";
#else
  EXPECT_EQ(evaluated, 1);
  // A freed object still held elsewhere: its destroy finds a count above one and aborts (in a
  // child process) naming the condition.
  EXPECT_DEATH(
      {
        ObjectPtr<Object> obj = make_object<Object>();
        FerryObject* header = details::ObjectUnsafe::GetHeader(obj.get());
        FerryObjectIncRef(header);
        header->deleter(header);
      },
      "FERRY_DCHECK failed: .*ref_counter.* <= 1");
  EXPECT_DEATH(FERRY_DCHECK(evaluated == 2), "test_object.cc.*FERRY_DCHECK failed: evaluated == 2");
#endif
}

// FERRY_LEAK_CHECK=1 is read once, when libferry loads: each child below is this binary run
// again (the "threadsafe" death-test style) with the variable set, and exits through exit(),
// where the check reports.
class LeakCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const char* old = std::getenv("FERRY_LEAK_CHECK");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("FERRY_LEAK_CHECK", "1", 1);
  }
  void TearDown() override {
    if (had_) {
      setenv("FERRY_LEAK_CHECK", old_.c_str(), 1);
    } else {
      unsetenv("FERRY_LEAK_CHECK");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

[[noreturn]] void LeakTwoArraysAndExit() {
  new Array<int64_t>{7};  // the handle is lost: its object is never freed
  new Array<int64_t>{8};
  std::exit(0);
}

[[noreturn]] void LeakACycleAndExit() {
  {
    List<ObjectRef> a;
    List<ObjectRef> b;
    a.push_back(b);
    b.push_back(a);  // each list's only owner is the other once the handles are gone
  }
  std::exit(0);
}

[[noreturn]] void FreeEverythingAndExit() {
  {
    Array<int64_t> x{7};
    Array<ObjectRef> arr{x, String("a string long enough to leave the small-string cache")};
    Map<String, ObjectRef> m{{"k", arr}};
    // The global table's references (and what its functions capture) are not leaks.
    Function::SetGlobal("leak_check_test.f",
                        Function::FromTyped([m](int64_t v) { return v + m.size(); }));
  }
  std::exit(0);
}

TEST_F(LeakCheck, AnObjectLeftAliveFailsTheExitNamingItsTypeKeyAndCount) {
  EXPECT_EXIT(LeakTwoArraysAndExit(), ::testing::ExitedWithCode(1), "ferry: +2  ferry.Array");
}

TEST_F(LeakCheck, ACycleIsALeak) {
  EXPECT_EXIT(LeakACycleAndExit(), ::testing::ExitedWithCode(1), "ferry: +2  ferry.List");
}

TEST_F(LeakCheck, EverythingFreedAndRegisteredGlobalsExitZeroSilently) {
  EXPECT_EXIT(FreeEverythingAndExit(), ::testing::ExitedWithCode(0), "^$");
}
}  // namespace
