/// \file ferry/reflection/json.h
/// Saving values, with every object reachable from them, as JSON text, and loading them back.
///
///     std::string text = SaveJSON(expr);
///     Expr back = LoadJSON(text).cast<Expr>();   // StructuralEqual(back, expr)
///
/// The format (version 1) is a node table: every object appears once, after the objects it
/// refers to, so a shared sub-graph stays shared and loading is one pass:
///
///     {"ferry_json": 1,
///      "root": {"ref": 2},
///      "nodes": [{"type": "test.Var", "fields": {"name": "x"}},
///                {"type": "ferry.Array", "items": [{"ref": 0}, 1.5]},
///                {"type": "test.Add", "fields": {"a": {"ref": 0}, "b": {"ref": 1}}}]}
///
/// Values: null, true/false, integers (int), numbers with a fraction or exponent (float),
/// strings (ferry.String), {"dtype": "int32"}, {"float": "nan" | "inf" | "-inf"}, and
/// {"ref": i} for object i. Node kinds: reflected nodes (`fields` by name, so a field added
/// later loads with its default), ferry.Array (`items`), ferry.Map (`items`: [[key, value],
/// ...]) and ferry.Shape (`dims`). Output is deterministic: the same graph gives the same bytes.
///
/// LoadJSON rejects malformed or hostile text with a ValueError that says what and where
/// (line:column, or the node and field): bad syntax, truncation, invalid UTF-8, numbers out of
/// range, nesting deeper than kMaxJSONDepth, unknown type keys or fields, wrong field types,
/// references to a node that is not before the referring one (so no cycles), missing parts.
#ifndef FERRY_REFLECTION_JSON_H_
#define FERRY_REFLECTION_JSON_H_

#include <string>       // the text
#include <string_view>  // LoadJSON input

#include "ferry/any.h"

namespace ferry {

/// The deepest nesting of JSON arrays and objects LoadJSON accepts.
inline constexpr int kMaxJSONDepth = 64;
/// The format version SaveJSON writes and LoadJSON reads.
inline constexpr int kJSONFormatVersion = 1;

/// Saves `value` and all it reaches. A ValueError for what JSON cannot hold: an object that is
/// not reflected (nor a container or String), an opaque pointer, a cycle, bytes that are not
/// UTF-8.
FERRY_DLL std::string SaveJSON(const AnyView& value);
/// Loads what SaveJSON wrote.
FERRY_DLL Any LoadJSON(std::string_view text);

}  // namespace ferry

#endif  // FERRY_REFLECTION_JSON_H_
