/// \file json_reader_internal.h
/// The JSON reader of LoadJSON: a strict parser of our own (no dependency) that checks UTF-8,
/// number ranges and nesting itself and reports errors by line and column. It parses into a
/// tape (a flat array of 16-byte JNodes); json.cc turns the tape into objects.
///
///     JsonReader doc(text); doc.ParseDocument(); size_t root = doc.Find(0, "root");
#ifndef FERRY_SRC_JSON_READER_INTERNAL_H_
#define FERRY_SRC_JSON_READER_INTERNAL_H_

#include <cstddef>      // size_t
#include <cstdint>      // SIZE_MAX, uint64_t
#include <deque>        // decoded strings that must not move
#include <string>       // messages
#include <string_view>  // the text and the strings of the tape
#include <vector>       // the tape

#include "ferry/error.h"

namespace ferry {
namespace details {

/// One value of the parsed document. The document is a flat array of these in text order
/// (a tape): a container is followed by its contents, an object member by its key (a string
/// node) and then its value. 16 bytes and no allocation per value; the old tree of values
/// with a std::string and two vectors each spent most of the load in malloc/free. The text
/// position is not stored: errors are rare, and JsonReader::PosOf finds it again.
struct JNode {
  enum Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  uint64_t kind : 3;
  uint64_t size : 61;  // kString: its length; kArray: items; kObject: members
  union {
    int64_t i;      // kBool (0 or 1), kInt
    double f;       // kFloat
    const char* s;  // kString: into the text, or into JsonReader::unescaped_
    uint64_t end;   // kArray, kObject: the index just past its contents
  };
  std::string_view str() const { return {s, static_cast<size_t>(size)}; }
};
static_assert(sizeof(JNode) == 16, "the tape is the bulk of a load's memory traffic");

/// How many nodes LoadJSON has read on its fast path (json.cc, Loader::FastNode) in this
/// thread: tests check that a document they mean for either path takes it.
FERRY_DLL uint64_t LoadJSONFastNodes() noexcept;
/// Turns LoadJSON's fast path off (or on again) in this thread: the fuzz target compares what
/// a text loads to, or the error it gives, both ways.
FERRY_DLL void SetLoadJSONFastPath(bool enabled) noexcept;

/// Byte classes for the reader's inner loops.
struct ByteTable {
  bool is[256] = {};
};

/// "null", "a boolean", ... for messages about a value of `kind` (a JNode::Kind).
const char* KindName(uint64_t kind);
/// An input text as a message quotes it: whole UTF-8 characters (a byte that starts none is
/// shown as "\xNN", so the message stays valid UTF-8), cut after about 60 bytes.
std::string QuoteText(std::string_view s);

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  /// Parses the whole text into the tape (so every syntax error comes before any error of
  /// meaning); the document is node 0.
  void ParseDocument();

  const JNode& operator[](size_t k) const { return tape_[k]; }
  /// The index of the value after value `k` (past a container's contents).
  size_t Next(size_t k) const {
    return tape_[k].kind >= JNode::kArray ? static_cast<size_t>(tape_[k].end) : k + 1;
  }
  /// The index of the value of member `key` of object `obj`, or 0 (never a member).
  size_t Find(size_t obj, std::string_view key) const {
    size_t k = obj + 1;
    for (uint64_t m = 0; m < tape_[obj].size; ++m, k = Next(k + 1)) {
      if (tape_[k].str() == key) return k + 1;
    }
    return 0;
  }

  /// Streams the top-level "nodes" array: `fn(context, k)` is called on each of its items
  /// once the item is parsed (tape index k), and the item is then dropped from the tape. So
  /// the tape stays small (a whole document's tape is 16 bytes per value, about 160 MB for a
  /// 1e6-node tree, whose page faults cost more than the parse). The caller must defer its
  /// errors to the end of the parse, so that every syntax error still comes first.
  using ItemFn = void (*)(void* context, size_t index);
  /// The fast path of the streamed items: called on the first byte `p` of an item (`end` is
  /// the end of the text), it reads as many of the items from there as it can, each whole
  /// and with the commas between them, and returns the byte just past the last one, having
  /// added to `*items` their number and to `*values` the number of tape values they would
  /// have taken; or it returns nullptr having read nothing for good (the item is then parsed
  /// onto the tape and passed to the ItemFn). It must accept only text the tape's parser
  /// accepts with the same meaning.
  using FastItemFn = const char* (*)(void* context, const char* p, const char* end, size_t* values,
                                     size_t* items);
  void StreamNodes(ItemFn fn, FastItemFn fast, void* context) {
    on_item_ = fn;
    fast_item_ = fast;
    context_ = context;
  }

  /// Where value `index` starts in the text: parses the text again (without streaming) up to
  /// it. Only errors need positions, so the tape does not carry them. If a streamed item
  /// fails, the text after it is not checked yet and the parse here may fail; but then the
  /// outer parse fails at the same place, and that syntax error is the one reported.
  size_t PosOf(size_t index) const;

  /// "line 3, column 7" of a byte offset.
  std::string Where(size_t pos) const;

  [[noreturn]] void FailAt(size_t pos, const std::string& what) const {
    FERRY_THROW(ValueError) << "LoadJSON: " << Where(pos) << ": " << what;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const;

  // The helpers declared inline are the parser's inner steps: inlined into ParseValue and
  // ParseString, as they were when the reader lived in one file with its user.
  /// Skips the run of bytes of class `table` at pos_. Local pointers: the loop is the
  /// reader's hottest, and through the members it reloads text_ and pos_ every byte.
  inline void SkipRun(const ByteTable& table);
  inline void SkipSpace();
  /// Skips the bytes of a string that stand for themselves (SkipRun(kPlain), faster).
  void SkipPlain();
  inline bool Peek(char c);
  inline void Expect(char c);
  void ExpectWord(const char* word);

  /// Appends a value of `kind` starting at pos_ and returns its index.
  inline size_t Push(JNode::Kind kind);
  inline void PushString();

  /// `stream`: the value is the top-level "nodes" (see StreamNodes).
  void ParseValue(int depth, bool stream);

  void ParseNumber();

  /// Reads a string at pos_ (on the quote), checking escapes and UTF-8. A string without
  /// escapes is returned as a view into the text (no copy); one with escapes is decoded into
  /// unescaped_, which keeps it for the rest of the load.
  std::string_view ParseString();

  void ParseEscape(std::string* out);

  uint32_t ParseHex4();

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<JNode> tape_;
  std::deque<std::string> unescaped_;  // strings with escapes; a deque never moves them
  size_t want_ = SIZE_MAX;             // PosOf: the value whose position to record
  size_t found_ = 0;
  ItemFn on_item_ = nullptr;  // StreamNodes
  FastItemFn fast_item_ = nullptr;
  void* context_ = nullptr;
  size_t split_ = SIZE_MAX;  // the first item of the streamed array: from here on, ...
  size_t dropped_ = 0;       // ... the tape index plus this is the index in the whole tape
};

}  // namespace details
}  // namespace ferry

#endif  // FERRY_SRC_JSON_READER_INTERNAL_H_
