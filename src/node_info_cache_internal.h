/// \file node_info_cache_internal.h
/// A small cache of NodeInfo records by type index for the structural walks (equality,
/// hashing, visit and transform). Internal; not part of the API.
#ifndef FERRY_SRC_NODE_INFO_CACHE_INTERNAL_H_
#define FERRY_SRC_NODE_INFO_CACHE_INTERNAL_H_

#include <cstdint>  // int32_t, uint32_t

#include "ferry/object.h"
#include "ferry/reflection/reflection.h"

namespace ferry {
namespace details {

/// GetNodeInfo by type index, remembered for the walk: a node type met once is looked up
/// once, not at every node (the registry's lookup is a call into another file and an atomic
/// load). Direct-mapped; a miss asks the registry. NodeInfo records are never freed.
class NodeInfoCache {
 public:
  const NodeInfo* Get(const Object* obj) {
    const int32_t type_index = obj->type_index();
    Entry& entry = entries_[static_cast<uint32_t>(type_index) % kEntries];
    if (entry.type_index != type_index) entry = Entry{type_index, GetNodeInfo(obj)};
    return entry.info;
  }

 private:
  static constexpr uint32_t kEntries = 16;
  struct Entry {
    int32_t type_index = -1;
    const NodeInfo* info = nullptr;
  };
  Entry entries_[kEntries];
};

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_NODE_INFO_CACHE_INTERNAL_H_
