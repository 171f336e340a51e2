// The test-support library of the Python tests (loaded with ferry.load_library; built with the
// tests, not part of libferry): functions that echo, fail, call back and sleep, and the small
// expression IR of tests/cpp/test_ir.h registered under "test.*".
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../../cpp/test_ir.h"

namespace {

using namespace test_ir;

/// A node that counts its live instances, for leak tests.
std::atomic<int64_t> live_counted{0};
class CountedNode : public Object {
 public:
  int64_t value = 0;
  CountedNode() { ++live_counted; }
  ~CountedNode() { --live_counted; }
  void VisitAttrs(AttrVisitor* v) { v->Visit("value", &value); }
  static constexpr const char* _type_key = "test.Counted";
  FERRY_DECLARE_FINAL_OBJECT_INFO(CountedNode, Object);
};

FERRY_REGISTER_NODE_TYPE(CountedNode);  // test_ir.h registers the others

/// An enum and a node with a field of it, for the enum tests (test_enum.py).
enum class OpKind : int32_t { kAdd = 0, kMul = 1, kSub = 5 };
FERRY_REGISTER_ENUM(OpKind, "test.OpKind",
                    {{OpKind::kAdd, "Add"}, {OpKind::kMul, "Mul"}, {OpKind::kSub, "Sub"}});
class OpHolderNode : public Object {
 public:
  OpKind op = OpKind::kAdd;
  void VisitAttrs(AttrVisitor* v) { v->Visit("op", &op); }
  static constexpr bool _type_sequal_by_fields = true;
  static constexpr bool _type_mutable = true;
  static constexpr const char* _type_key = "test.OpHolder";
  FERRY_DECLARE_FINAL_OBJECT_INFO(OpHolderNode, Object);
};
FERRY_REGISTER_NODE_TYPE(OpHolderNode);
/// The op of an OpHolder as C++ sees it: its integer value.
FERRY_REGISTER_GLOBAL("test.op_value").set_body_typed([](ObjectRef holder) {
  return static_cast<int64_t>(holder.as<OpHolderNode>()->op);
});

FERRY_REGISTER_GLOBAL("test.IntImm").set_body_typed([](int64_t v) { return IntImm(v); }, {"value"});
FERRY_REGISTER_GLOBAL("test.Var").set_body_typed([](String name) { return Var(name); }, {"name"});
FERRY_REGISTER_GLOBAL("test.Add")
    .set_body_typed([](Expr a, Expr b) { return Add(a, b); }, {"a", "b"});
FERRY_REGISTER_GLOBAL("test.Let").set_body_typed([](Var var, Expr value, Expr body) {
  return Let(var, value, body);
});
FERRY_REGISTER_GLOBAL("test.Func").set_body_typed([](Array<Var> params, Expr body) {
  return Func(params, body);
});
FERRY_REGISTER_GLOBAL("test.Counted").set_body_typed([](int64_t value) {
  auto n = make_object<CountedNode>();
  n->value = value;
  return ObjectRef(n);
});
FERRY_REGISTER_GLOBAL("test.live_counted").set_body_typed([]() -> int64_t {
  return live_counted.load();
});

/// use_count(obj): the strong count of an object, read without taking a reference.
FERRY_REGISTER_GLOBAL("test.use_count").set_body([](const AnyView* args, int32_t n, Any* out) {
  FERRY_CHECK(n == 1 && args[0].raw()->type_index >= kFerryStaticObjectBegin) << "an object";
  *out = static_cast<int64_t>(args[0].raw()->v_obj->ref_counter);
});
/// keep(x) / kept() / drop(): holds one value on the C++ side until dropped.
Any kept;
// For py_class tests: C++ code that takes the C++ parent type of a Python-defined type.
FERRY_REGISTER_GLOBAL("test.is_expr").set_body_typed([](ObjectRef obj) {
  return obj.defined() && obj->IsInstance<ExprNode>();
});
/// Reads the fields of a test.Mutable (or a type derived from it, in C++ or Python) the way C++
/// code does, through the C++ class, and bumps `count` in place.
FERRY_REGISTER_GLOBAL("test.bump_mutable").set_body_typed([](ObjectRef obj) {
  const MutableNode* node = obj.as<MutableNode>();
  if (node == nullptr) FERRY_THROW(TypeError) << "expected test.Mutable, got " << obj->GetTypeKey();
  const_cast<MutableNode*>(node)->count += 1;
  return Array<Any>{Any(node->count), Any(node->label)};
});
FERRY_REGISTER_GLOBAL("test.keep").set_body_typed([](Any v) { kept = std::move(v); });
FERRY_REGISTER_GLOBAL("test.drop").set_body_typed([]() { kept = Any(); });
FERRY_REGISTER_GLOBAL("test.kept").set_body_typed([]() { return kept; });

FERRY_REGISTER_GLOBAL("test.nop").set_body([](const AnyView*, int32_t, Any*) {});
FERRY_REGISTER_GLOBAL("test.echo").set_body([](const AnyView* args, int32_t n, Any* out) {
  FERRY_CHECK(n == 1) << "echo takes one argument";
  *out = Any(args[0]);
});
// The form a value arrived in: [type_index, small_len] of the argument's cell.
FERRY_REGISTER_GLOBAL("test.cell_of").set_body([](const AnyView* args, int32_t n, Any* out) {
  FERRY_CHECK(n == 1) << "cell_of takes one argument";
  *out = Array<int64_t>({args[0].raw()->type_index, args[0].raw()->small_len});
});
FERRY_REGISTER_GLOBAL("test.add")
    .set_body_typed([](int64_t a, int64_t b) { return a + b; }, {"a", "b"});
FERRY_REGISTER_GLOBAL("test.sub")
    .set_body_typed([](int64_t a, int64_t b) { return a - b; }, {"a", "b"});
FERRY_REGISTER_GLOBAL("test.concat").set_body_typed([](std::string a, std::string b) {
  return a + b;
});
FERRY_REGISTER_GLOBAL("test.type_key").set_body_typed([](AnyView v) {
  return std::string(v.GetTypeKey());
});
FERRY_REGISTER_GLOBAL("test.sum_array").set_body_typed([](Array<int64_t> xs) {
  int64_t sum = 0;
  for (int64_t x : xs) sum += x;
  return sum;
});
FERRY_REGISTER_GLOBAL("test.bytes_size").set_body_typed([](Bytes b) {
  return static_cast<int64_t>(b.size());
});
// The bytes as a String, unchecked: how C++ may hand Python text that is not UTF-8.
FERRY_REGISTER_GLOBAL("test.bytes_as_string").set_body_typed([](Bytes b) {
  return String(b.data(), b.size());
});
FERRY_REGISTER_GLOBAL("test.make_bytes").set_body_typed([](int64_t n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i)] = static_cast<char>(i);
  return Bytes(s);
});
FERRY_REGISTER_GLOBAL("test.dtype_bits").set_body_typed([](DataType t) {
  return static_cast<int64_t>(t.bits());
});

/// raise(kind, message): throws a ferry::Error of that kind.
FERRY_REGISTER_GLOBAL("test.raise").set_body_typed([](std::string kind, std::string message) {
  throw Error(kind, message, details::CaptureBacktrace(0));
});
FERRY_REGISTER_GLOBAL("test.raise_value_error").set_body_typed([](std::string message) {
  FERRY_THROW(ValueError) << message;
});
/// Throw sites that only debug information can name: a static function and a lambda.
[[gnu::noinline]] static void ThrowFromStaticFunction(int64_t value) {
  FERRY_THROW(ValueError) << "from a static function " << value;
}
[[gnu::noinline]] static void CallStaticThrower(int64_t value) {
  ThrowFromStaticFunction(value + 1);
  live_counted.fetch_add(0);  // not a tail call: this frame stays on the stack
}
FERRY_REGISTER_GLOBAL("test.throw_from_static").set_body_typed([](int64_t value) {
  CallStaticThrower(value);
});
FERRY_REGISTER_GLOBAL("test.throw_from_lambda").set_body_typed([]() {
  auto thrower = [](int x) { FERRY_THROW(KeyError) << "from a lambda " << x; };
  thrower(7);
});
/// raise_bytes(b): a ValueError whose message is the bytes b, UTF-8 or not.
FERRY_REGISTER_GLOBAL("test.raise_bytes").set_body_typed([](Bytes b) {
  FERRY_THROW(ValueError) << std::string(b.data(), b.size());
});
/// backtrace_of(f): calls f(); returns the backtrace text of the ferry::Error it raised.
FERRY_REGISTER_GLOBAL("test.backtrace_of").set_body_typed([](Function f) -> std::string {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.backtrace());
  }
  return "";
});
FERRY_REGISTER_GLOBAL("test.throw_int").set_body([](const AnyView*, int32_t, Any*) {
  throw 42;  // not a std::exception: must still become a RuntimeError
});

/// call(f, *args): f(*args).
FERRY_REGISTER_GLOBAL("test.call").set_body([](const AnyView* args, int32_t n, Any* out) {
  FERRY_CHECK(n >= 1) << "call(f, *args)";
  args[0].cast<Function>().CallPacked(args + 1, n - 1, out);
});
/// call_n(f, n): calls f(i) for i in [0, n) and returns the sum of the results.
FERRY_REGISTER_GLOBAL("test.call_n").set_body_typed([](Function f, int64_t n) {
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += f(i).cast<int64_t>();
  return sum;
});
/// call_in_threads(f, threads, n): each of `threads` C++ threads calls f(i) n times; returns
/// the sum of the results, or rethrows the first error.
FERRY_REGISTER_GLOBAL("test.call_in_threads")
    .set_body_typed([](Function f, int64_t num_threads, int64_t n) {
      std::atomic<int64_t> sum{0};
      std::vector<std::thread> threads;
      std::vector<std::string> errors(static_cast<size_t>(num_threads));
      for (int64_t t = 0; t < num_threads; ++t) {
        threads.emplace_back([&, t] {
          try {
            for (int64_t i = 0; i < n; ++i) sum += f(i).cast<int64_t>();
          } catch (const Error& e) {
            errors[static_cast<size_t>(t)] = e.what();
          }
        });
      }
      for (auto& th : threads) th.join();
      for (const auto& e : errors) FERRY_CHECK(e.empty()) << e;
      return sum.load();
    });
/// set_attr_in_threads(obj, name, values, threads, rounds): each of `threads` C++ threads sets
/// the field `name` of `obj` to the values in turn, `rounds` times (with the GIL released, while
/// Python threads may write the same field).
FERRY_REGISTER_GLOBAL("test.set_attr_in_threads")
    .set_body_typed([](ObjectRef obj, String name, Array<Any> values, int64_t num_threads,
                       int64_t rounds) {
      std::vector<std::thread> threads;
      for (int64_t t = 0; t < num_threads; ++t) {
        threads.emplace_back([&, t] {
          for (int64_t i = 0; i < rounds; ++i) {
            SetAttr(obj, name.view(), values[(t + i) % static_cast<int64_t>(values.size())]);
          }
        });
      }
      for (auto& th : threads) th.join();
    });
/// catch_kind(f): calls f(); returns "kind: message" of the ferry::Error it raised, or "".
FERRY_REGISTER_GLOBAL("test.catch_kind").set_body_typed([](Function f) -> std::string {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.kind()) + ": " + std::string(e.message());
  }
  return "";
});
/// sleep_ms(ms): a long C++ call that does not touch Python.
FERRY_REGISTER_GLOBAL("test.sleep_ms").set_body_typed([](int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
});
/// sleep_100ms(): the same without arguments (calls of no arguments take a path of their own).
FERRY_REGISTER_GLOBAL("test.sleep_100ms").set_body_typed([]() {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
});
/// Registered quick(): Python keeps the GIL during its calls. (A real quick function would not
/// sleep; the test uses the sleep to see that the GIL stays held.)
FERRY_REGISTER_GLOBAL("test.sleep_ms_quick").quick().set_body_typed([](int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
});

// Mutable fields and Function parameters (tests/python/test_object.py, test_values.py).
/// nested_array(depth): [[[...[]...]]], `depth` Arrays deep, built without recursion.
FERRY_REGISTER_GLOBAL("test.nested_array").set_body_typed([](int64_t depth) {
  Array<Any> inner;
  for (int64_t i = 0; i < depth; ++i) inner = Array<Any>{Any(inner)};
  return inner;
});
/// list_push(xs, v): appends in C++ to a List the caller holds; returns the new size.
FERRY_REGISTER_GLOBAL("test.list_push").set_body_typed([](List<int64_t> xs, int64_t v) {
  xs.push_back(v);
  return static_cast<int64_t>(xs.size());
});
/// dict_fill_by(cb): makes a Dict, lets the Python callback fill it, reads it back in C++.
FERRY_REGISTER_GLOBAL("test.dict_fill_by").set_body_typed([](Function cb) {
  Dict<String, int64_t> d;
  cb(d);
  int64_t total = 0;
  for (auto [key, value] : d) total += value;
  return total;
});
FERRY_REGISTER_GLOBAL("test.make_list").set_body_typed([]() {
  return List<Any>{Any(1), Any("a")};
});
/// make_adder(n): an anonymous C++ function (never registered): x -> x + n.
FERRY_REGISTER_GLOBAL("test.make_adder").set_body_typed([](int64_t n) {
  return Function::FromTyped([n](int64_t x) { return x + n; });
});
FERRY_REGISTER_GLOBAL("test.call_with_41").set_body_typed([](Function f) { return f(41); });
FERRY_REGISTER_GLOBAL("test.mutable_count").set_body_typed([](ObjectRef obj) {
  return obj.as<test_ir::MutableNode>()->count;  // read straight from the C++ object
});
FERRY_REGISTER_GLOBAL("test.mutable_set_count").set_body_typed([](ObjectRef obj, int64_t n) {
  SetAttr(obj, "count", n);
});

}  // namespace
