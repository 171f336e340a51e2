// Tests of ferry/string.h: construction, access, comparison, hashing, concatenation.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <unordered_set>

namespace {

using ferry::String;

TEST(String, ConstructsFromEveryStringLikeType) {
  std::string std_str = "from std::string";
  EXPECT_EQ(String("literal").view(), "literal");
  EXPECT_EQ(String(std_str).view(), std_str);
  EXPECT_EQ(String(std::string_view("a view")).view(), "a view");
  EXPECT_EQ(String("abcdef", 3).view(), "abc");
  String empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_STREQ(empty.c_str(), "");
  EXPECT_TRUE(String().same_as(String())) << "the empty string is shared";
}

TEST(String, KeepsEmbeddedNulsAndTerminates) {
  String s(std::string("a\0b", 3));
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1], '\0');
  EXPECT_EQ(s.c_str()[3], '\0');
  EXPECT_EQ(std::string(s), std::string("a\0b", 3));
}

TEST(String, IsOneAllocationWithTheBytesInline) {
  String s = "forty bytes of text, more than any SSO!!";
  ASSERT_EQ(s.size(), 40u);
  const char* object_end = reinterpret_cast<const char*>(s.get() + 1);
  EXPECT_EQ(s.data(), object_end);
}

TEST(String, ComparesByValue) {
  String a = "apple";
  String a2 = std::string("apple");
  String b = "banana";
  EXPECT_FALSE(a.same_as(a2));
  EXPECT_TRUE(a == a2);
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b >= a);
  EXPECT_TRUE(a == "apple");
  EXPECT_TRUE("apple" == a);
  EXPECT_TRUE(a == std::string("apple"));
  EXPECT_TRUE(std::string_view("apple") == a);
  EXPECT_TRUE(a < "b");
  EXPECT_LT(a.compare("apples"), 0);
  EXPECT_EQ(a.compare("apple"), 0);
  // Plain string_view comparisons stay unambiguous with ferry in scope.
  using namespace ferry;  // NOLINT
  EXPECT_TRUE(std::string_view("x") == "x");
}

TEST(String, HashesByValue) {
  std::unordered_set<String> set;
  set.insert(String("key"));
  set.insert(String(std::string("key")));
  set.insert(String("other"));
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(std::hash<String>()(String("key")), std::hash<std::string_view>()("key"));
}

TEST(String, ConcatenatesAndPrints) {
  String s = String("a") + "b" + std::string("c") + String("d");
  EXPECT_EQ(s, "abcd");
  EXPECT_EQ("x" + String("y"), "xy");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "abcd");
}

TEST(String, RejectsBadInput) {
  const char* null_str = nullptr;
  EXPECT_THROW(String{null_str}, ferry::Error);
  EXPECT_THROW(String(nullptr, 3), ferry::Error);
  String s = "abc";
  EXPECT_EQ(s.at(2), 'c');
  try {
    s.at(3);
    FAIL();
  } catch (const ferry::Error& e) {
    EXPECT_EQ(e.kind(), "IndexError");
  }
}

TEST(String, CrossesTheCAbi) {
  FerryObjectHandle handle = nullptr;
  ASSERT_EQ(FerryStringCreate("hi there", 2, &handle), 0);
  const char* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(FerryStringGetData(handle, &data, &size), 0);
  EXPECT_EQ(std::string(data, size), "hi");
  EXPECT_EQ(data[size], '\0');
  FerryObjectDecRef(handle);
}

}  // namespace
