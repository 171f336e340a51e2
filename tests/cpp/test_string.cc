// Tests of ferry/string.h: construction, access, comparison, hashing, concatenation.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

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

TEST(String, EveryLengthAroundTheSmallBlockSizeKeepsItsBytes) {
  // Up to 31 bytes come from the per-thread block cache, longer ones from the heap.
  std::vector<String> strings;
  std::vector<ferry::Bytes> bytes;
  for (size_t n = 0; n <= 80; ++n) {
    std::string text(n, static_cast<char>('a' + n % 26));
    if (n > 2) text[n / 2] = '\0';
    strings.emplace_back(text);
    bytes.emplace_back(text);
  }
  for (size_t n = 0; n <= 80; ++n) {
    std::string text(n, static_cast<char>('a' + n % 26));
    if (n > 2) text[n / 2] = '\0';
    EXPECT_EQ(std::string(strings[n]), text) << n;
    EXPECT_EQ(strings[n].c_str()[n], '\0') << n;
    EXPECT_EQ(bytes[n].view(), text) << n;
    EXPECT_EQ(strings[n].data(), reinterpret_cast<const char*>(strings[n].get() + 1)) << n;
  }
}

TEST(String, ReusesTheBlockOfAReleasedSmallString) {
  const void* first = String("short one").get();
  // The block went back to this thread's cache; the next small string (or bytes) takes it.
  String again("another");
  EXPECT_EQ(static_cast<const void*>(again.get()), first);
  EXPECT_EQ(again.view(), "another");
}

TEST(String, SmallStringsMadeOnOneThreadAndReleasedOnAnother) {
  // Blocks migrate to the releasing thread's cache; threads exit with full caches (which they
  // free: the leak checker of the sanitizer build sees any block left behind).
  constexpr int kPerRound = 2000;
  std::vector<String> made;
  for (int round = 0; round < 3; ++round) {
    std::thread producer([&] {
      for (int i = 0; i < kPerRound; ++i) made.emplace_back("s" + std::to_string(i));
    });
    producer.join();
    std::thread consumer([&] {
      for (int i = 0; i < kPerRound; ++i) ASSERT_EQ(made[i].view(), "s" + std::to_string(i));
      made.clear();  // into the consumer's cache, up to its limit; the rest to the heap
      for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(String("t" + std::to_string(i)).size(), i < 10 ? 2u : 3u);
      }
    });
    consumer.join();
  }
  std::vector<std::thread> racers;
  for (int t = 0; t < 4; ++t) {
    racers.emplace_back([t] {
      for (int i = 0; i < 5000; ++i) {
        String a("x" + std::to_string(t * 100000 + i));
        ferry::Bytes b(a.view());
        ASSERT_EQ(b.view(), a.view());
      }
    });
  }
  for (std::thread& racer : racers) racer.join();
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
  using namespace ferry;
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
