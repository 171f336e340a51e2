// Tests of ferry/reflection/json.h: round trips, sharing, determinism, and the rejection of
// malformed and hostile documents.
#include <gtest/gtest.h>

#include <cctype>  // isalnum
#include <cmath>
#include <cstdio>  // snprintf
#include <random>
#include <string>
#include <vector>

#include "json_reader_internal.h"  // details::LoadJSONFastNodes
#include "test_ir.h"
#include "test_util.h"

namespace {

using namespace test_ir;
using ferry_test::ExpectError;

void ExpectRoundTrip(const AnyView& value) {
  std::string text = SaveJSON(value);
  Any back = LoadJSON(text);
  EXPECT_TRUE(StructuralEqual()(back, value, true)) << text;
  EXPECT_EQ(SaveJSON(back), text) << "re-saving must give the same bytes";
}

TEST(JSON, PlainValuesRoundTrip) {
  ExpectRoundTrip(Any());
  ExpectRoundTrip(true);
  ExpectRoundTrip(int64_t{-9223372036854775807LL - 1});
  ExpectRoundTrip(0.1);
  ExpectRoundTrip(1e300);
  ExpectRoundTrip(3.0);
  ExpectRoundTrip("text with \"quotes\", \\, \n, \x01 and ünïcödé ✓ 𝄞");
  ExpectRoundTrip(DataType("float32x4"));
  EXPECT_EQ(LoadJSON(SaveJSON(3.0)).type_index(), kFerryFloat) << "3.0 stays a float";
  EXPECT_TRUE(std::isnan(LoadJSON(SaveJSON(std::nan(""))).cast<double>()));
  EXPECT_EQ(LoadJSON(SaveJSON(-HUGE_VAL)).cast<double>(), -HUGE_VAL);
}

TEST(JSON, NodesAndContainersRoundTrip) {
  Var x("x");
  ExpectRoundTrip(Let(x, IntImm(1), Add(x, IntImm(2))));
  ExpectRoundTrip(Array<Any>{Any(1), Any("s"), Any(Array<Any>{}), Any(Shape({2, 3}))});
  ExpectRoundTrip(Map<Any, Any>{{Any("a"), Any(1)}, {Any(2), Any(x)}});
  auto n = make_object<AttrsNode>();
  n->flag = true;
  n->small = 3;
  n->ratio = 2.5;
  n->text = "t";
  n->maybe = x;
  n->count = 4;
  n->items = {x, IntImm(1)};
  n->table = {{"k", x}};
  n->shape = {1, 2};
  n->anything = Array<Any>{Any(x)};
  ExpectRoundTrip(ObjectRef(n));
}

TEST(JSON, SharingIsKept) {
  Expr shared = Add(IntImm(1), IntImm(2));
  Array<Expr> pair = {shared, shared};
  Array<Expr> back = LoadJSON(SaveJSON(pair)).cast<Array<Expr>>();
  EXPECT_TRUE(back[0].same_as(back[1])) << "a DAG must stay a DAG";
  // A binary DAG of depth 30 has 2^30 paths but only 31 nodes in the file.
  Expr dag = IntImm(0);
  for (int i = 0; i < 30; ++i) dag = Add(dag, dag);
  std::string text = SaveJSON(dag);
  EXPECT_LT(text.size(), 5000u);
  EXPECT_TRUE(StructuralEqual()(LoadJSON(text), dag));
}

TEST(JSON, OutputIsDeterministicAndDocumented) {
  Var x("x");
  EXPECT_EQ(SaveJSON(Add(x, x)),
            "{\"ferry_json\": 1, \"root\": {\"ref\": 1}, \"nodes\": [\n"
            "  {\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}},\n"
            "  {\"type\": \"test.Add\", \"fields\": {\"a\": {\"ref\": 0}, \"b\": {\"ref\": 0}}}\n"
            "]}");
  EXPECT_EQ(SaveJSON(5), "{\"ferry_json\": 1, \"root\": 5, \"nodes\": []}");
}

TEST(JSON, MissingFieldsKeepTheirDefaults) {
  // A file written before IntImm had `dtype` still loads.
  Any v = LoadJSON(
      R"({"ferry_json": 1, "root": {"ref": 0}, "nodes": [{"type": "test.IntImm", "fields": {"value": 7}}]})");
  EXPECT_EQ(v.cast<IntImm>()->value, 7);
  EXPECT_EQ(v.cast<IntImm>()->dtype, DataType("int64"));
}

TEST(JSON, SaveRejectsWhatJSONCannotHold) {
  ExpectError([] { SaveJSON(ObjectRef(make_object<OpaqueNode>())); }, "ValueError",
              {"test.Opaque", "not registered"});
  ExpectError([] { SaveJSON(Function::FromTyped([] { return 1; }, "f")); }, "FunctionInJSONError",
              {"ferry.Function"});
  int local = 0;
  ExpectError([&] { SaveJSON(static_cast<void*>(&local)); }, "ValueError", {"void*"});
  ExpectError([] { SaveJSON(std::string("\xff\xfe")); }, "ValueError", {"not UTF-8"});
  auto n = make_object<AttrsNode>();
  n->anything = ObjectRef(n);
  ExpectError([&] { SaveJSON(ObjectRef(n)); }, "ValueError", {"cycle", "test.Attrs"});
  n->anything = Any();
}

TEST(JSON, CycleThroughABorrowedRootIsAValueError) {
  // The only reference to the root is its own field (count 1): still a cycle.
  auto n = make_object<AttrsNode>();
  n->anything = ObjectRef(n);
  Object* raw = n.get();
  n.reset();
  FerryAny cell;
  cell.type_index = raw->type_index();
  cell.small_len = 0;
  cell.v_obj = details::ObjectUnsafe::GetHeader(raw);
  ExpectError([&] { SaveJSON(*reinterpret_cast<const AnyView*>(&cell)); }, "ValueError",
              {"cycle", "test.Attrs"});
  ObjectRef hold = GetRef<ObjectRef>(raw);  // break the cycle, then free it
  static_cast<AttrsNode*>(raw)->anything = Any();
}

TEST(JSON, StringFieldWithEmbeddedNulRoundTrips) {
  auto n = make_object<AttrsNode>();
  n->text = std::string("a\0b", 3);
  Any back = LoadJSON(SaveJSON(ObjectRef(n)));
  EXPECT_EQ(back.cast<ObjectRef>().as<AttrsNode>()->text, std::string("a\0b", 3));
}

struct BadCase {
  std::string text;
  const char* message;
};

TEST(JSON, MalformedAndHostileInputIsAValueErrorSayingWhere) {
  const std::string head = R"({"ferry_json": 1, "root": {"ref": 0}, "nodes": [)";
  const std::vector<BadCase> cases = {
      {"", "line 1, column 1: expected a value"},
      {"[1, 2", "expected ']'"},
      {"{\"a\" 1}", "expected ':'"},
      {"nul", "invalid literal"},
      {"01", "leading zero"},
      {"1.", "expected digits after '.'"},
      {"{} x", "unexpected text after the document"},
      {"\"\\x\"", "invalid escape"},
      {"\"\\ud800\"", "unpaired surrogate"},
      {"\"\xc3\x28\"", "invalid UTF-8"},
      {"\"\xed\xa0\x80\"", "invalid UTF-8"},  // an encoded surrogate
      {"\"\xc0\xaf\"", "invalid UTF-8"},      // an overlong encoding
      {"\"a\nb\"", "control character"},
      {"{\"a\": 1, \"a\": 2}", "duplicate key \"a\""},
      {"99999999999999999999", "out of range"},
      {"1e999", "out of range"},
      {"[]", "the document must be an object"},
      {"{\"root\": 1, \"nodes\": []}", "missing \"ferry_json\""},
      {"{\"ferry_json\": 2, \"root\": 1, \"nodes\": []}", "unsupported format version"},
      {"{\"ferry_json\": 1, \"nodes\": []}", "missing \"root\""},
      {"{\"ferry_json\": 1, \"root\": 1, \"nodes\": {}}", "\"nodes\" must be an array"},
      {"{\"ferry_json\": 1, \"root\": 1, \"nodes\": [], \"x\": 0}", "unknown key \"x\""},
      {"{\"ferry_json\": 1, \"root\": {\"ref\": 0}, \"nodes\": []}", "root: reference to node 0"},
      {"{\"ferry_json\": 1, \"root\": [1], \"nodes\": []}", "unexpected array"},
      {"{\"ferry_json\": 1, \"root\": {\"x\": 1}, \"nodes\": []}", "unexpected object"},
      {"{\"ferry_json\": 1, \"root\": {\"dtype\": \"int7x\"}, \"nodes\": []}", "line 1"},
      {head + R"({"type": "test.Add", "fields": {"a": {"ref": 0}, "b": {"ref": 0}}}]})",
       "node 0 (test.Add): reference to node 0"},  // self-reference
      {head + R"({"type": "test.Var", "fields": {"name": "x"}}, {"type": "test.Add",
          "fields": {"a": {"ref": 5}, "b": {"ref": 0}}}]})",
       "reference to node 5"},
      {head + R"({"type": "test.Nope", "fields": {}}]})", "node 0 (test.Nope): unknown type key"},
      {head + R"({"type": "test.IntImm", "fields": {"value": 1, "bogus": 2}}]})",
       "unknown field \"bogus\""},
      {head + R"({"type": "test.IntImm", "fields": {"value": "one"}}]})",
       "node 0 (test.IntImm), field \"value\": expected int but got ferry.String"},
      {head + R"({"type": "test.Add", "fields": {"a": 1}}]})",
       "field \"a\": expected test.Expr but got int"},
      {head + R"({"type": "test.IntImm", "fields": {"value": 1}, "extra": 1}]})",
       "unknown key \"extra\""},
      {head + R"({"fields": {}}]})", "node 0: missing \"type\""},
      {head + R"({"type": "test.Fixed", "fields": {}}]})", "no default constructor"},
      {head + R"({"type": "ferry.Map", "items": [[1]]}]})", "[key, value]"},
      {head + R"({"type": "ferry.Map", "items": [["a", 1], ["b", 2], ["a", 3]]}]})",
       "line 1, column 102: node 0 (ferry.Map): duplicate key \"a\""},
      {head + R"({"type": "ferry.Map", "items": [[1.5, 1], [1.5, 2]]}]})",
       "node 0 (ferry.Map): duplicate key 1.5"},
      {head + R"({"type": "ferry.Shape", "dims": [1.5]}]})", "a dimension must be an integer"},
      {head + R"(3]})", "node 0 must be an object"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectError([&] { LoadJSON(c.text); }, "ValueError", {"LoadJSON", c.message});
  }
}

TEST(JSON, StringsEndAndEscapeAtEveryOffset) {
  // The reader skips plain bytes of a string eight at a time: a quote, a backslash, a control
  // character or a non-ASCII byte must be seen at every offset of such a step, and the plain
  // bytes before and after it kept.
  const std::string head = R"({"ferry_json": 1, "nodes": [], "root": ")";
  auto load = [&](const std::string& s) { return LoadJSON(head + s + "\"}").cast<std::string>(); };
  for (size_t at = 0; at < 20; ++at) {
    SCOPED_TRACE(at);
    const std::string before(at, 'a'), after = std::string(13, 'b');
    const std::vector<std::pair<std::string, std::string>> specials = {{"\\\"", "\""},
                                                                       {"\\n", "\n"},
                                                                       {"\\u00e9", "\xc3\xa9"},
                                                                       {"\xc3\xa9", "\xc3\xa9"},
                                                                       {"~\x7f", "~\x7f"}};
    for (const auto& [text, value] : specials) {
      EXPECT_EQ(load(before + text + after), before + value + after) << text;
    }
    EXPECT_EQ(load(before), before);
    const std::string column = "column " + std::to_string(head.size() + at + 1);
    ExpectError([&] { load(before + "\x01" + after); }, "ValueError",
                {"control character", column.c_str()});
    ExpectError([&] { load(before + "\xff" + after); }, "ValueError",
                {"invalid UTF-8", column.c_str()});
    ExpectError([&] { LoadJSON(head + before); }, "ValueError", {"unterminated string"});
  }
}

TEST(JSON, DuplicateKeysOfLargeObjectsAreFound) {
  // Past 16 members the keys are checked through a set: a late duplicate of an early key, of
  // the key just before it, and of a key with an escape are all caught, with their position.
  auto object_of = [](int n, const std::string& last) {
    std::string text = "{\"ferry_json\": 1, \"root\": 1, \"nodes\": [], \"x\": {";
    for (int i = 0; i < n; ++i) text += "\"k" + std::to_string(i) + "\": 0, ";
    return text + last + ": 0}}";
  };
  for (int n : {15, 16, 17, 40, 20000}) {
    SCOPED_TRACE(n);
    ExpectError([&] { LoadJSON(object_of(n, "\"k0\"")); }, "ValueError", {"duplicate key \"k0\""});
    const std::string last = "\"k" + std::to_string(n - 1) + "\"";
    ExpectError([&] { LoadJSON(object_of(n, last)); }, "ValueError",
                {("duplicate key " + last).c_str()});
    ExpectError([&] { LoadJSON(object_of(n, "\"\\u006b1\"")); }, "ValueError",
                {"duplicate key \"k1\""});
    // Without a duplicate the document gets as far as the unknown top-level key.
    ExpectError([&] { LoadJSON(object_of(n, "\"other\"")); }, "ValueError", {"unknown key \"x\""});
  }
}

TEST(JSON, ErrorPositionsPastTheFirstLineAndEscapedKeys) {
  // The reader does not keep positions; an error finds its value's position again.
  const std::vector<BadCase> cases = {
      {"{\"ferry_json\": 1, \"root\": {\"ref\": 0}, \"nodes\": [\n"
       "  {\"type\": \"test.Nope\", \"fields\": {\"value\": \"one\"}}]}",
       "line 2, column 12: node 0 (test.Nope): unknown type key"},
      // A key with an escape is decoded before keys are compared.
      {"{\"ferry_json\": 1, \"root\": 1, \"nodes\": [],\n \"n\\u006fdes\": 2}",
       "line 2, column 2: duplicate key \"nodes\""},
      {"{\"ferry_json\": 1, \"root\": [1, 2,\n\n   {\"x\": [true, null, \"a\\\"b\"]}], \"nodes\": "
       "[]}",
       "line 1, column 27: unexpected array"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectError([&] { LoadJSON(c.text); }, "ValueError", {"LoadJSON", c.message});
  }
}

TEST(JSON, NodeErrorsComeAfterSyntaxAndTopLevelErrors) {
  // The nodes are loaded while the text is parsed, but an error of a node still comes after
  // every syntax error and every error of the top level, and its position counts the nodes
  // already loaded and dropped from the reader's tape.
  const std::vector<BadCase> cases = {
      {"{\"ferry_json\": 1, \"root\": {\"ref\": 0}, \"nodes\": "
       "[{\"type\": \"test.Nope\", \"fields\": {}}, 1 2]}",
       "line 1, column 88: expected ']'"},
      {"{\"ferry_json\": 1, \"root\": {\"ref\": 0}, \"nodes\": "
       "[{\"type\": \"test.Nope\", \"fields\": {}}], \"extra\": 1}",
       "line 1, column 96: unknown key \"extra\""},
      {"{\"root\": {\"ref\": 0}, \"nodes\": [{\"type\": \"test.Nope\", \"fields\": {}}], "
       "\"ferry_json\": 2}",
       "line 1, column 84: unsupported format version"},
      {"{\"ferry_json\": 1, \"root\": {\"ref\": 1}, \"nodes\": [\n"
       "  {\"type\": \"ferry.Array\", \"items\": []},\n"
       "  {\"type\": \"ferry.Array\", \"items\": [[]]},\n"
       "  {\"type\": \"test.Nope\"}]}",
       "line 3, column 37: unexpected array"},
      {"{\"ferry_json\": 1, \"nodes\": [{\"type\": \"ferry.Array\", \"items\": [1, 2]},\n"
       " {\"type\": \"ferry.Array\", \"items\": [{\"ref\": 0}]}], \"root\": {\"ref\": 2}}",
       "line 2, column 67: root: reference to node 2, which is not before the referring one"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectError([&] { LoadJSON(c.text); }, "ValueError", {"LoadJSON", c.message});
  }
  // The root may come after the nodes.
  EXPECT_EQ(
      SaveJSON(LoadJSON(
          "{\"ferry_json\": 1, \"nodes\": [{\"type\": \"ferry.Array\", \"items\": [1, 2]},"
          " {\"type\": \"ferry.Array\", \"items\": [{\"ref\": 0}]}], \"root\": {\"ref\": 1}}")),
      "{\"ferry_json\": 1, \"root\": {\"ref\": 1}, \"nodes\": [\n"
      "  {\"type\": \"ferry.Array\", \"items\": [1, 2]},\n"
      "  {\"type\": \"ferry.Array\", \"items\": [{\"ref\": 0}]}\n]}");
}

TEST(JSON, NestingIsLimited) {
  std::string deep = "{\"ferry_json\": 1, \"root\": " + std::string(100000, '[') + "]}";
  ExpectError([&] { LoadJSON(deep); }, "ValueError", {"nesting deeper than 64"});
}

TEST(JSON, EveryTruncationIsAValueError) {
  Var x("x");
  auto n = make_object<AttrsNode>();
  n->text = "é";
  n->items = {x, Let(x, IntImm(1), Add(x, IntImm(-2)))};
  n->table = {{"k", x}};
  n->ratio = 1.25;
  std::string text = SaveJSON(ObjectRef(n));
  for (size_t cut = 0; cut < text.size(); ++cut) {
    try {
      LoadJSON(std::string_view(text).substr(0, cut));
      ADD_FAILURE() << "a document cut at byte " << cut << " loaded";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), "ValueError") << cut << ": " << e.what();
    }
  }
  EXPECT_TRUE(StructuralEqual()(LoadJSON(text), ObjectRef(n), true));
}

TEST(JSON, MillionLongChain) {
  Expr chain = IntImm(0);
  for (int i = 0; i < 1000000; ++i) chain = Add(chain, IntImm(i));
  std::string text = SaveJSON(chain);
  Any back = LoadJSON(text);
  EXPECT_TRUE(StructuralEqual()(back, chain));
}

Expr RandomGraph(std::mt19937* rng, std::vector<Expr>* pool, std::vector<Var>* vars, int size) {
  for (int k = 0; k < size; ++k) {
    switch ((*rng)() % 4) {
      case 0:
        pool->push_back(IntImm(static_cast<int64_t>((*rng)() % 100) - 50));
        break;
      case 1: {
        Var v("v" + std::to_string(k));
        vars->push_back(v);
        pool->push_back(v);
        break;
      }
      default:
        if (pool->empty()) break;
        pool->push_back(Add((*pool)[(*rng)() % pool->size()], (*pool)[(*rng)() % pool->size()]));
    }
  }
  return pool->empty() ? Expr(IntImm(0)) : pool->back();
}

TEST(JSON, RandomGraphsRoundTripByteIdentically) {
  for (uint32_t seed = 0; seed < 100; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Expr> pool;
    std::vector<Var> vars;
    Expr root = RandomGraph(&rng, &pool, &vars, 40);
    Array<Expr> all(pool.begin(), pool.end());
    ExpectRoundTrip(all);
    ExpectRoundTrip(root);
  }
}

/// `text` with the first letter of every `every`-th node's type key (from the first) written as
/// a \u escape: the same document, but those nodes can only be read the general way.
std::string EscapeTypes(const std::string& text, int every) {
  const std::string mark = "\"type\": \"";
  std::string out;
  size_t pos = 0;
  int k = 0;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, pos)) {
    out.append(text, pos, at + mark.size() - pos);
    const char c = text[at + mark.size()];
    if (k++ % every == 0 && std::isalnum(static_cast<unsigned char>(c))) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
      out += escape;
    } else {
      out += c;
    }
    pos = at + mark.size() + 1;
  }
  return out.append(text, pos);
}

/// `text` with other whitespace between its tokens (its strings must hold none of ", : {").
std::string Respace(const std::string& text) {
  std::string out;
  for (size_t k = 0; k < text.size(); ++k) {
    if (text.compare(k, 2, ", ") == 0) {
      out += " ,\r\n\t";
      ++k;
    } else if (text.compare(k, 2, ": ") == 0) {
      out += "\t:  ";
      ++k;
    } else if (text[k] == '{') {
      out += "{\n ";
    } else if (text[k] == '}') {
      out += " }";
    } else {
      out += text[k];
    }
  }
  return out;
}

TEST(JSON, FastAndGeneralPathsLoadTheSame) {
  // A node laid out as SaveJSON writes it is read straight into its object (the fast path),
  // any other through the reader's tape; whichever way, the same graph comes out. A node whose
  // type key has an escape only the general path reads; other spacing the fast path reads.
  std::vector<Any> values;
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Expr> pool;
    std::vector<Var> vars;
    RandomGraph(&rng, &pool, &vars, 30);
    values.push_back(Array<Expr>(pool.begin(), pool.end()));
  }
  Var x("x");
  values.push_back(Let(x, Add(x, x), Add(Add(x, x), x)));
  auto m = make_object<MutableNode>();
  m->count = -9223372036854775807LL;
  m->small = 7;
  m->label = "label with spaces";
  m->expr = x;
  values.push_back(ObjectRef(m));
  for (const Any& value : values) {
    const std::string text = SaveJSON(value);
    SCOPED_TRACE(text);
    uint64_t before = details::LoadJSONFastNodes();
    EXPECT_EQ(SaveJSON(LoadJSON(text)), text);
    const uint64_t fast = details::LoadJSONFastNodes() - before;
    EXPECT_GT(fast, 0u) << "every Var and Add node is laid out for the fast path";
    for (int every : {1, 2, 3}) {
      const std::string escaped = EscapeTypes(text, every);
      ASSERT_NE(escaped, text);
      before = details::LoadJSONFastNodes();
      EXPECT_EQ(SaveJSON(LoadJSON(escaped)), text) << escaped;
      const uint64_t taken = details::LoadJSONFastNodes() - before;
      if (every == 1) {
        EXPECT_EQ(taken, 0u) << "no node can take the fast path";
      } else {
        EXPECT_LT(taken, fast) << "the paths alternate";
      }
    }
    // Arrays take the fast path only as SaveJSON lays them out.
    uint64_t arrays = 0;
    for (size_t at = text.find("ferry.Array"); at != std::string::npos;
         at = text.find("ferry.Array", at + 1)) {
      ++arrays;
    }
    before = details::LoadJSONFastNodes();
    EXPECT_EQ(SaveJSON(LoadJSON(Respace(text))), text);
    EXPECT_EQ(details::LoadJSONFastNodes() - before, fast - arrays);
  }
  // Every kind of value the fast path reads (fields may be left out, in order).
  const std::string text =
      "{\"ferry_json\": 1, \"root\": {\"ref\": 5}, \"nodes\": [\n"
      "  {\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}},\n"
      "  {\"type\": \"test.Attrs\", \"fields\": {\"flag\": true, \"small\": -7, \"text\": \"t\", "
      "\"name\": \"\", \"maybe\": {\"ref\": 0}, \"count\": null}},\n"
      "  {\"type\": \"test.Attrs\", \"fields\": {\"flag\": false, \"small\": 0, \"ratio\": "
      "-2.5e-3, "
      "\"dtype\": {\"dtype\": \"int8x4\"}, \"maybe\": null, \"count\": 123456789012345678}},\n"
      "  {\"type\": \"test.Var\", \"fields\": {}},\n"
      "  {\"type\": \"ferry.Array\", \"items\": []},\n"
      "  {\"type\": \"ferry.Array\", \"items\": [{\"ref\": 1}, {\"ref\": 2}, {\"ref\": 3}, "
      "{\"ref\": 4}, 7, -1.5, \"s\", true, null, {\"dtype\": \"float16\"}]}\n]}";
  const uint64_t before = details::LoadJSONFastNodes();
  const Any fast = LoadJSON(text);
  EXPECT_EQ(details::LoadJSONFastNodes() - before, 6u);
  const Any general = LoadJSON(EscapeTypes(text, 1));
  EXPECT_EQ(details::LoadJSONFastNodes() - before, 6u);
  EXPECT_TRUE(StructuralEqual()(fast, general, true));
  EXPECT_EQ(SaveJSON(fast), SaveJSON(general));
  const Array<Any> items = fast.cast<Array<Any>>();
  ASSERT_EQ(items.size(), 10);
  EXPECT_EQ(items[3].cast<Array<Any>>().size(), 0);
  EXPECT_EQ(items[4].cast<int64_t>(), 7);
  EXPECT_EQ(items[5].cast<double>(), -1.5);
  EXPECT_EQ(items[6].cast<std::string>(), "s");
  EXPECT_TRUE(items[7].cast<bool>());
  EXPECT_TRUE(items[8].is_none());
  EXPECT_EQ(items[9].cast<DataType>(), DataType("float16"));
  const auto* attrs = items[0].cast<ObjectRef>().as<AttrsNode>();
  ASSERT_NE(attrs, nullptr);
  EXPECT_TRUE(attrs->flag);
  EXPECT_EQ(attrs->small, -7);
  EXPECT_EQ(attrs->text, "t");
  EXPECT_TRUE(attrs->maybe.has_value());
  EXPECT_FALSE(attrs->count.has_value());
  const auto* second = items[1].cast<ObjectRef>().as<AttrsNode>();
  EXPECT_EQ(second->count.value(), 123456789012345678);
  EXPECT_EQ(second->ratio, -2.5e-3);
  EXPECT_EQ(second->dtype, DataType("int8x4"));
}

TEST(JSON, FastPathErrorsAreTheGeneralPathsErrors) {
  // A node the fast path cannot read to the end (bad syntax, a bad value, a field out of
  // order) is read again from its start the general way, which reports the error. The nodes
  // before it, read either way (each on its own line), must not move its position.
  const std::string head =
      "{\"ferry_json\": 1, \"root\": {\"ref\": 0}, \"nodes\": [\n"
      "  {\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}},\n"
      "  {\"type\": \"test.Add\", \"fields\": {\"a\": {\"ref\": 0}, \"b\": {\"ref\": 0}}},\n";
  const std::string root_last =
      "{\"ferry_json\": 1, \"nodes\": [\n" + head.substr(head.find('\n') + 1);
  const std::vector<BadCase> cases = {
      {"{\"type\": \"test.Attrs\", \"fields\": {\"small\": 99999999999}}",
       "line 4, column 46: node 2 (test.Attrs), field \"small\""},
      {"{\"type\": \"test.Add\", \"fields\": {\"a\": {\"ref\": 2}, \"b\": {\"ref\": 0}}}",
       "line 4, column 48: node 2 (test.Add): reference to node 2"},
      {"{\"type\": \"test.Add\", \"fields\": {\"a\": {\"ref\": -1}, \"b\": {\"ref\": 0}}}",
       "reference to node -1"},
      {"{\"type\": \"test.Add\", \"fields\": {\"a\": {\"ref\": 0}, \"b\": 1}}",
       "field \"b\": expected test.Expr but got int"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\", \"name\": \"y\"}}",
       "line 4, column 48: duplicate key \"name\""},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}, \"type\": \"test.Var\"}",
       "duplicate key \"type\""},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": 01}}", "leading zero"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": tru}}", "invalid literal"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"} 3}", "expected '}'"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\",}}", "expected a string key"},
      {"{\"type\": \"test.Var\", \"fields\": {\"nom\": \"x\"}}", "unknown field \"nom\""},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\", \"extra\": 1}}",
       "unknown field \"extra\""},
      {"{\"type\": \"test.Fixed\", \"fields\": {\"value\": 1}}", "no default constructor"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"dtype\": {\"dtype\": \"int7x\"}}}",
       "line 4, column 56: cannot parse 'int7x' as a DataType"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"dtype\": {\"dtype\": 3}}}", "unexpected object"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"dtype\": {\"dtype\": \"\"}}}", "as a DataType"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"maybe\": {\"ref\": 0, \"x\": 1}}}",
       "unexpected object"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"ratio\": 1e999}}", "out of range"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"ratio\": 1.}}", "expected digits after '.'"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"ratio\": 1e+}}",
       "expected digits in the exponent"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"count\": 99999999999999999999}}", "out of range"},
      {"{\"type\": \"test.Attrs\", \"fields\": {\"small\": 2.5}}",
       "field \"small\": expected int32 but got float"},
      {"{\"type\": \"test.Nope\", \"fields\": {}}", "unknown type key"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"a\x01\"}}", "control character"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": 1.5}}", "expected ferry.String"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}", "line 4, column 47: expected '}'"},
      {"{\"type\": \"test.Var\", \"fields\": {\"name\": \"x\"}}], \"nodes\": 1}",
       "line 4, column 51: duplicate key \"nodes\""},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string tail = c.text + (c.text.find("], ") == std::string::npos ? "]}" : "");
    const std::string text = head + "  " + tail;
    const std::string general = EscapeTypes(head, 1) + "  " + tail;
    std::string fast_error, general_error;
    try {
      LoadJSON(text);
    } catch (const Error& e) {
      fast_error = e.what();
    }
    try {
      LoadJSON(general);
    } catch (const Error& e) {
      general_error = e.what();
    }
    EXPECT_EQ(fast_error, general_error);
    ExpectError([&] { LoadJSON(text); }, "ValueError", {"LoadJSON", c.message});
  }
  // The root after the nodes: its position counts the values of the nodes read the fast way.
  for (const std::string& first : {root_last, EscapeTypes(root_last, 1)}) {
    ExpectError(
        [&] {
          LoadJSON(first +
                   "  {\"type\": \"test.Var\", \"fields\": {}}],\n \"root\": {\"ref\": 9}}");
        },
        "ValueError", {"line 5, column 18: root: reference to node 9"});
  }
}

/// What LoadJSON made of `text`: the saved result, or the error without its position.
std::string Outcome(const std::string& text) {
  try {
    return SaveJSON(LoadJSON(text));
  } catch (const Error& e) {
    std::string what = e.what();
    const size_t column = what.find("column ");
    if (column != std::string::npos) what.erase(0, what.find(':', column));
    return what;
  }
}

TEST(JSON, MutatedDocumentsLoadTheSameEitherWay) {
  // Random edits of a saved graph (bytes deleted, doubled or replaced by JSON's own), read
  // with the fast path where it applies and with every node forced onto the general path (by
  // an escape in its type key, positions aside as the escapes move the columns; and with the
  // fast path turned off): the same graph or the same error.
  std::mt19937 rng(7);
  std::vector<Expr> pool;
  std::vector<Var> vars;
  RandomGraph(&rng, &pool, &vars, 30);
  auto m = make_object<AttrsNode>();
  m->flag = true;
  m->small = -3;
  m->ratio = 0.5;
  m->name = "n";
  m->count = 12;
  m->maybe = pool.back();
  const std::string text =
      SaveJSON(Array<ObjectRef>{Array<Expr>(pool.begin(), pool.end()), ObjectRef(m)});
  const std::string alphabet = "{}[]:,\" 0123456789.-+eEtrufalsn \\\n";
  const uint64_t before = details::LoadJSONFastNodes();
  int loaded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = text;
    for (int edits = 1 + static_cast<int>(rng() % 2); edits > 0; --edits) {
      const size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0:
          mutated.erase(at, 1);
          break;
        case 1:
          mutated.insert(at, 1, mutated[at]);
          break;
        default:
          mutated[at] = alphabet[rng() % alphabet.size()];
      }
    }
    SCOPED_TRACE(mutated);
    const std::string fast = Outcome(mutated);
    ASSERT_EQ(fast, Outcome(EscapeTypes(mutated, 1)));
    std::string fast_error, general_error;  // with their positions
    try {
      LoadJSON(mutated);
    } catch (const Error& e) {
      fast_error = e.what();
    }
    details::SetLoadJSONFastPath(false);
    try {
      LoadJSON(mutated);
    } catch (const Error& e) {
      general_error = e.what();
    }
    details::SetLoadJSONFastPath(true);
    ASSERT_EQ(fast_error, general_error);
    loaded += fast.rfind("{\"ferry_json\"", 0) == 0;
  }
  EXPECT_GT(loaded, 100) << "some edits keep the document valid";
  EXPECT_GT(details::LoadJSONFastNodes() - before, 10000u);
}

TEST(JSON, Globals) {
  Function save = Function::GetGlobalRequired("ferry.SaveJSON");
  Function load = Function::GetGlobalRequired("ferry.LoadJSON");
  Any back = load(save(IntImm(9)));
  EXPECT_EQ(back.cast<IntImm>()->value, 9);
  ExpectError([&] { load("{"); }, "ValueError", {"LoadJSON"});
}

}  // namespace
