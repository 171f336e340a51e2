// The runtime's internal address -> value hash map (src/pointer_map_internal.h), against
// std::unordered_map as the oracle: inserts, lookups and erases in random order, across growth,
// with keys chosen to collide.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "pointer_map_internal.h"

namespace {

using ferry::details::PointerMap;

const void* Key(uintptr_t i) { return reinterpret_cast<const void*>((i + 1) * 16); }

TEST(PointerMap, InsertFindErase) {
  PointerMap<int> map;
  EXPECT_EQ(map.Find(Key(1)), nullptr);
  EXPECT_FALSE(map.Erase(Key(1)));
  auto [value, inserted] = map.Insert(Key(1), 10);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*value, 10);
  auto again = map.Insert(Key(1), 20);
  EXPECT_FALSE(again.second);
  EXPECT_EQ(*again.first, 10) << "an insert of a present key keeps its value";
  EXPECT_EQ(map.size(), 1u);
  EXPECT_TRUE(map.Erase(Key(1)));
  EXPECT_FALSE(map.Erase(Key(1)));
  EXPECT_EQ(map.Find(Key(1)), nullptr);
  EXPECT_EQ(map.size(), 0u);
}

TEST(PointerMap, MatchesUnorderedMapUnderRandomOperations) {
  PointerMap<uint64_t> map;
  std::unordered_map<const void*, uint64_t> oracle;
  std::mt19937_64 rng(12345);
  // Few distinct keys, many operations: long probe runs, wrap-around at the table's end, and
  // erases from the middle of runs.
  for (int round = 0; round < 200000; ++round) {
    const void* key = Key(rng() % 3000);
    switch (rng() % 3) {
      case 0: {
        uint64_t v = rng();
        auto [slot, inserted] = map.Insert(key, v);
        auto [it, oracle_inserted] = oracle.emplace(key, v);
        ASSERT_EQ(inserted, oracle_inserted);
        ASSERT_EQ(*slot, it->second);
        break;
      }
      case 1:
        ASSERT_EQ(map.Erase(key), oracle.erase(key) == 1);
        break;
      default: {
        uint64_t* found = map.Find(key);
        auto it = oracle.find(key);
        ASSERT_EQ(found != nullptr, it != oracle.end());
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second);
        }
      }
    }
    ASSERT_EQ(map.size(), oracle.size());
  }
  for (const auto& [key, value] : oracle) {
    ASSERT_NE(map.Find(key), nullptr);
    EXPECT_EQ(*map.Find(key), value);
  }
}

TEST(PointerMap, EraseEverythingLeavesAnEmptyMap) {
  PointerMap<int> map;
  std::vector<const void*> keys;
  for (uintptr_t i = 0; i < 1000; ++i) {
    keys.push_back(Key(i * 64));  // strided addresses, as allocators hand out
    map.Insert(keys.back(), static_cast<int>(i));
  }
  for (size_t i = 0; i < keys.size(); i += 2) EXPECT_TRUE(map.Erase(keys[i]));
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_NE(map.Find(keys[i]), nullptr);
  for (size_t i = 1; i < keys.size(); i += 2) EXPECT_TRUE(map.Erase(keys[i]));
  EXPECT_EQ(map.size(), 0u);
  for (const void* key : keys) EXPECT_EQ(map.Find(key), nullptr);
}

}  // namespace
