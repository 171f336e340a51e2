// Tests of ferry/string.h: construction, access, comparison, hashing, concatenation.
#include <ferry/ferry.h>
#include <gtest/gtest.h>
#include <malloc.h>  // mallinfo2: what malloc has handed out

#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "operator_new_counter.h"

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
  EXPECT_TRUE(String().same_as(String())) << "equal inline strings are the same value";
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
  // Up to 7 bytes inline, up to 31 from the per-thread block cache, longer ones from the heap;
  // the short ones are copied in overlapping fixed-size pieces, so every byte differs from its
  // neighbours here (a piece at the wrong offset shows), with a NUL and a high byte inside.
  auto text_of = [](size_t n) {
    std::string text;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>('!' + (i * 7 + n) % 90);
    if (n > 2) text[n / 2] = '\0';
    if (n > 3) text[n / 3] = '\xff';
    return text;
  };
  std::vector<String> strings;
  std::vector<ferry::Bytes> bytes;
  std::vector<ferry::Any> cells;  // through StringToAny, the copy of Any(std::string)
  for (size_t n = 0; n <= 80; ++n) {
    strings.emplace_back(text_of(n));
    bytes.emplace_back(text_of(n));
    cells.emplace_back(text_of(n));
  }
  for (size_t n = 0; n <= 80; ++n) {
    std::string text = text_of(n);
    EXPECT_EQ(cells[n].cast<std::string>(), text) << n;
    EXPECT_STREQ(cells[n].cast<const char*>() + n, "") << n;
    EXPECT_EQ(std::string(strings[n]), text) << n;
    EXPECT_EQ(strings[n].c_str()[n], '\0') << n;
    EXPECT_EQ(bytes[n].view(), text) << n;
    EXPECT_EQ(strings[n].is_inline(), n <= String::kInlineCapacity) << n;
    if (n > String::kInlineCapacity) {
      EXPECT_EQ(strings[n].data(), reinterpret_cast<const char*>(strings[n].get() + 1)) << n;
    }
  }
}

TEST(String, ReusesTheBlockOfAReleasedSmallString) {
  const void* first = String("short one").get();
  // The block went back to this thread's cache; the next small string (or bytes) takes it.
  String again("another one");
  EXPECT_EQ(static_cast<const void*>(again.get()), first);
  EXPECT_EQ(again.view(), "another one");
}

TEST(String, SmallStringsMadeOnOneThreadAndReleasedOnAnother) {
  // Blocks migrate to the releasing thread's cache; threads exit with full caches (which they
  // free: the leak checker of the sanitizer build sees any block left behind).
  constexpr int kPerRound = 2000;
  std::vector<String> made;
  for (int round = 0; round < 3; ++round) {
    std::thread producer([&] {
      for (int i = 0; i < kPerRound; ++i) made.emplace_back("string " + std::to_string(i));
    });
    producer.join();
    std::thread consumer([&] {
      for (int i = 0; i < kPerRound; ++i) {
        ASSERT_EQ(made[i].view(), "string " + std::to_string(i));
      }
      made.clear();  // into the consumer's cache, up to its limit; the rest to the heap
      for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(String("string " + std::to_string(i)).size(), i < 10 ? 8u : 9u);
      }
    });
    consumer.join();
  }
  std::vector<std::thread> racers;
  for (int t = 0; t < 4; ++t) {
    racers.emplace_back([t] {
      for (int i = 0; i < 5000; ++i) {
        String a("a string " + std::to_string(t * 100000 + i));
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
  EXPECT_TRUE(a.same_as(a2)) << "inline strings are values";
  EXPECT_FALSE(String("a long apple string").same_as(String("a long apple string")));
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

// ---------------------------------------------------------------------------------------------
// Inline strings: up to 7 bytes live in the 16-byte value, longer ones in a StringObj.

TEST(String, KeepsUpToSevenBytesInlineWithoutAnAllocation) {
  static_assert(sizeof(String) == sizeof(FerryAny), "a String is one value cell");
  static_assert(String::kInlineCapacity == 7);
  const char* text = "abcdefghij";
  for (size_t n = 0; n <= 10; ++n) {
    const int64_t before = t_operator_new_calls;
    {
      String s(text, n);
      EXPECT_EQ(s.view(), std::string_view(text, n));
      EXPECT_EQ(s.c_str()[n], '\0') << n;
      EXPECT_EQ(s.is_inline(), n <= 7) << n;
      EXPECT_EQ(s.get() == nullptr, n <= 7) << n;
      String copy = s;  // an inline copy is a copy of the bytes; a long one shares the object
      EXPECT_EQ(copy.is_inline() ? copy.data() != s.data() : copy.data() == s.data(), true) << n;
    }
    // Long strings come from the per-thread block cache after the first, so count only the
    // inline ones: they must never reach the allocator.
    if (n <= 7) {
      EXPECT_EQ(t_operator_new_calls, before) << n;
    }
  }
  // malloc too (make_object allocates with it): a thousand inline strings held at once take
  // no byte from the heap.
  std::vector<String> held;
  held.reserve(1000);
  const size_t heap_before = mallinfo2().uordblks;
  char text7[] = "00abcde";
  for (int i = 0; i < 1000; ++i) {
    text7[0] = static_cast<char>('0' + i / 100 % 10);
    text7[1] = static_cast<char>('0' + i / 10 % 10);
    held.emplace_back(text7, 7);
  }
  EXPECT_EQ(mallinfo2().uordblks, heap_before);
  EXPECT_TRUE(held.back().is_inline());
  held.emplace_back("a string that needs a StringObj of its own");
  held.emplace_back(std::string(100, 'x'));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_GT(mallinfo2().uordblks, heap_before) << "mallinfo2 sees a long string's object";
#endif
  const int64_t before_vector = t_operator_new_calls;
  std::vector<int> counted(100);
  EXPECT_EQ(t_operator_new_calls, before_vector + 1) << "the counter sees allocations";
  const int64_t before = t_operator_new_calls;
  String joined = String("abc") + "def";
  EXPECT_TRUE(joined.is_inline());
  EXPECT_EQ(joined, "abcdef");
  EXPECT_EQ(t_operator_new_calls, before) << "a short concatenation stays inline";
  EXPECT_FALSE((joined + "gh").is_inline());
}

TEST(String, InlineAndObjectFormsAreOneValue) {
  // The same bytes as an inline string and as a StringObj (what the C ABI or an old library
  // may hand over): equal, equally hashed, interchangeable as Map keys.
  String inline_form("key");
  String object_form(ferry::details::MakeString("key", 3));
  ASSERT_TRUE(inline_form.is_inline());
  ASSERT_FALSE(object_form.is_inline());
  EXPECT_EQ(inline_form, object_form);
  EXPECT_FALSE(inline_form.same_as(object_form));
  EXPECT_EQ(std::hash<String>()(inline_form), std::hash<String>()(object_form));
  EXPECT_EQ(ferry::Any(inline_form).type_index(), kFerrySmallStr);
  EXPECT_EQ(ferry::Any(object_form).type_index(), kFerryString);
  EXPECT_TRUE(ferry::StructuralEqual()(ferry::Any(inline_form), ferry::Any(object_form)));
  EXPECT_EQ(ferry::StructuralHash()(ferry::Any(inline_form)),
            ferry::StructuralHash()(ferry::Any(object_form)));
  ferry::Map<String, int64_t> by_inline = {{inline_form, 1}};
  ferry::Map<String, int64_t> by_object = {{object_form, 2}};
  EXPECT_EQ(by_inline.at(object_form), 1);
  EXPECT_EQ(by_object.at(inline_form), 2);
  EXPECT_EQ(by_object.at("key"), 2);
}

TEST(String, BecomesAnObjectRefWhereOneIsTaken) {
  // Materialized for an inline string (a new StringObj), shared for a long one.
  ferry::ObjectRef short_ref = String("abc");
  ASSERT_TRUE(short_ref.defined());
  EXPECT_EQ(short_ref->type_index(), kFerryString);
  EXPECT_EQ(short_ref.as<ferry::StringObj>()->size, 3u);
  EXPECT_EQ(ferry::Downcast<String>(short_ref), "abc");
  String long_string("a string too long to keep inline");
  ferry::ObjectRef long_ref = long_string;
  EXPECT_EQ(long_ref.get(), long_string.get());
  EXPECT_EQ(long_ref.use_count(), 2);
  String back = ferry::Downcast<String>(long_ref);
  EXPECT_TRUE(back.same_as(long_string));
  EXPECT_EQ(long_ref.use_count(), 3);
  EXPECT_EQ(ferry::GetRef<String>(long_string.get()), long_string);
  ferry::ObjectRef not_a_string = ferry::Array<int64_t>({1});
  try {
    ferry::Downcast<String>(not_a_string);
    FAIL();
  } catch (const ferry::Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(std::string(e.message()).find("ferry.String"), std::string::npos) << e.message();
  }
  // An Any holding either form reads back as an ObjectRef, too.
  EXPECT_EQ(ferry::Any(String("ab")).cast<ferry::ObjectRef>()->type_index(), kFerryString);
}

TEST(String, CopiesMovesAndAssignmentsOfBothForms) {
  String a("short");
  String b("a string that lives in a StringObj");
  ferry::ObjectRef b_ref = b;
  const int64_t shared = b_ref.use_count();
  {
    String c = b;
    EXPECT_EQ(b_ref.use_count(), shared + 1);
    c = a;  // drops its reference to b's object
    EXPECT_EQ(b_ref.use_count(), shared);
    EXPECT_EQ(c, "short");
    c = std::move(b);
    EXPECT_EQ(b_ref.use_count(), shared);
    EXPECT_TRUE(b.empty()) << "a moved-from String is the empty string";
    EXPECT_TRUE(b.is_inline());
    String& self = c;
    c = self;
    EXPECT_EQ(c, "a string that lives in a StringObj");
    EXPECT_EQ(b_ref.use_count(), shared);
  }
  EXPECT_EQ(b_ref.use_count(), shared - 1);
  String d = std::move(a);
  EXPECT_EQ(d, "short");
  EXPECT_TRUE(a.empty());
}

TEST(String, TravelsThroughAnyArraysAndOptional) {
  ferry::Array<String> names = {"x", "a much longer name", ""};
  ferry::Any boxed = names;
  auto back = boxed.cast<ferry::Array<String>>();
  EXPECT_EQ(back[0], "x");
  EXPECT_TRUE(back[0].is_inline());
  EXPECT_EQ(back[1], "a much longer name");
  EXPECT_EQ(back[2], "");
  // A borrowed C string in a view becomes a String by copy.
  ferry::AnyView view = "borrowed c string";
  EXPECT_EQ(view.raw()->type_index, kFerryRawStr);
  EXPECT_EQ(view.cast<String>(), "borrowed c string");
  EXPECT_EQ(ferry::AnyView("tiny").cast<String>(), "tiny");
  EXPECT_FALSE(ferry::Any(int64_t{1}).try_cast<String>().has_value());
  ferry::Optional<String> maybe = String("opt");
  EXPECT_EQ(*maybe, "opt");
  EXPECT_EQ(ferry::Any(maybe).cast<String>(), "opt");
  EXPECT_TRUE(ferry::Any(ferry::Optional<String>()).is_none());
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
