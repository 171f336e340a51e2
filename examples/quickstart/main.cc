// A tour of the Ferry object model in one program: define node types, make objects, share
// them, cast them, and mutate with copy-on-write.
#include <ferry/ferry.h>

#include <iostream>

namespace demo {

using namespace ferry;  // a demo program, not a header

/// An expression: the base of a tiny hierarchy, with two reserved child slots.
class ExprNode : public Object {
 public:
  static constexpr const char* _type_key = "demo.Expr";
  static constexpr int32_t _type_child_slots = 2;
  FERRY_DECLARE_BASE_OBJECT_INFO(ExprNode, Object);
};
class Expr : public ObjectRef {
 public:
  FERRY_DEFINE_OBJECT_REF_METHODS(Expr, ObjectRef, ExprNode);
};

class IntImmNode : public ExprNode {
 public:
  explicit IntImmNode(int64_t v) : value(v) {}
  int64_t value;
  static constexpr const char* _type_key = "demo.IntImm";
  FERRY_DECLARE_FINAL_OBJECT_INFO(IntImmNode, ExprNode);
};
class IntImm : public Expr {
 public:
  explicit IntImm(int64_t v) : Expr(make_object<IntImmNode>(v)) {}
  FERRY_DEFINE_OBJECT_REF_METHODS(IntImm, Expr, IntImmNode);
};

class AddNode : public ExprNode {
 public:
  Expr a, b;
  static constexpr const char* _type_key = "demo.Add";
  FERRY_DECLARE_FINAL_OBJECT_INFO(AddNode, ExprNode);
};
class Add : public Expr {
 public:
  Add(Expr a, Expr b) {
    ObjectPtr<AddNode> n = make_object<AddNode>();
    n->a = std::move(a);
    n->b = std::move(b);
    data_ = std::move(n);
  }
  FERRY_DEFINE_OBJECT_REF_METHODS(Add, Expr, AddNode);
  FERRY_DEFINE_OBJECT_REF_COW_METHOD(AddNode);
};

}  // namespace demo

int main() {
  using namespace demo;
  std::cout << "Ferry " << FERRY_VERSION_STRING << " quickstart\n\n";

  IntImm one(1), two(2);
  Add sum(one, two);
  std::cout << "1. made " << sum->GetTypeKey() << "(" << sum->a->GetTypeKey() << ", "
            << sum->b->GetTypeKey() << "), type index " << sum->type_index() << "\n";

  Expr e = sum;  // a second handle to the same object
  std::cout << "2. two handles share one object: use_count = " << sum.use_count()
            << ", same_as = " << std::boolalpha << e.same_as(sum) << "\n";

  std::cout << "3. casting: e.as<AddNode>() is " << (e.as<AddNode>() ? "non-null" : "null")
            << ", e.as<IntImmNode>() is " << (e.as<IntImmNode>() ? "non-null" : "null") << "\n";
  try {
    IntImm wrong = Downcast<IntImm>(e);
  } catch (const Error& err) {
    std::cout << "   Downcast<IntImm>(e) throws " << err.what() << "\n";
  }

  Add sum2 = Downcast<Add>(e);
  sum2.CopyOnWrite()->b = IntImm(40);  // shared, so this copies first
  std::cout << "4. copy-on-write: sum.b = " << Downcast<IntImm>(sum->b)->value
            << ", sum2.b = " << Downcast<IntImm>(sum2->b)->value
            << ", sum2 is a new object: " << !sum2.same_as(sum) << "\n";
  AddNode* before = sum2.CopyOnWrite();
  std::cout << "   a unique handle mutates in place: " << (before == sum2.get()) << "\n";

  String greeting = String("hello, ") + "ferry";
  DataType dtype("float32x4");
  std::cout << "5. values: String \"" << greeting << "\" (" << greeting.size()
            << " bytes), DataType " << dtype << " has " << dtype.lanes() << " lanes of "
            << dtype.bits() << " bits\n";
  return 0;
}
