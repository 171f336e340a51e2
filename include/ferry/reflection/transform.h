/// \file ferry/reflection/transform.h
/// Walking and rewriting object graphs: the passes of a compiler written on Ferry nodes.
///
///     // Every reachable object once, children before parents.
///     int64_t adds = 0;
///     StructuralVisit(expr, [&](const ObjectRef& node) { adds += node.as<AddNode>() != nullptr;
///     });
///
///     // Bottom-up rewrite: fold `IntImm + IntImm`. `fn` sees each node with its children
///     // already rewritten and returns a replacement, or a null reference to keep it.
///     Expr folded = StructuralTransform(expr, [](const ObjectRef& node) -> ObjectRef {
///       const auto* add = node.as<AddNode>();
///       const auto* a = add ? add->a.as<IntImmNode>() : nullptr;
///       const auto* b = add ? add->b.as<IntImmNode>() : nullptr;
///       if (a && b) return IntImm(a->value + b->value);
///       return ObjectRef();
///     });
///
/// What is walked: the fields of registered nodes (every field, as reflection lists them), the
/// elements of Array and List, the keys and values of Map and Dict. Strings and bytes are values,
/// not visited; other objects (functions, tensors, unregistered objects) are visited as leaves.
///
/// Sharing: an object reachable by several paths is visited once, and in a transform its one
/// result is used everywhere it occurred, so a DAG stays a DAG. A node none of whose children
/// changed is kept as the very same object (`same_as`); a node with a changed child is copied
/// with those fields replaced (copy-on-write: only the path from a change to the root is
/// copied). Replacements are not walked again.
///
/// Both recurse natively into unique immutable nodes up to details::kStructuralWalkRecursion
/// levels and use an explicit stack for everything else and deeper (depth is limited by memory,
/// not the C++ stack). A cycle (possible
/// only through mutable objects: List, Dict, `_type_mutable` nodes) is a ValueError naming the
/// path, never a hang. An error thrown by `fn`, or a replacement the field cannot hold (a
/// TypeError naming the field), propagates with the same kind and the access path of the node
/// being visited in the message: "StructuralTransform: at root.b.a (test.Add): ...". Two keys of a
/// Map or Dict transformed into equal keys are a ValueError (rather than a lost entry).
///
/// `fn` should not modify the graph being walked; if it does, the walk stays memory safe: an
/// object `fn` drops the last outside reference to is not freed while the walk is inside it
/// (the walk holds shared objects and the children of List, Dict and `_type_mutable` nodes; a
/// child only an immutable node, Array or Map holds lives as long as that parent, whose fields
/// cannot change; writing such a field in place through GetObjectPtr or a kept ObjectPtr during
/// the walk is not supported). It reads a container's items as it reaches them, and a
/// transform whose node no longer has the children it walked is a ValueError.
#ifndef FERRY_REFLECTION_TRANSFORM_H_
#define FERRY_REFLECTION_TRANSFORM_H_

#include <memory>       // addressof
#include <type_traits>  // invoke_result, is_function
#include <utility>      // forward

#include "ferry/any.h"
#include "ferry/object.h"

namespace ferry {
namespace details {
/// How deep the walks recurse natively: a unique immutable node's children are walked by a call
/// of the walk per level down to this depth (a run of the explicit stack that such a node starts
/// for a child counts as kStructuralWalkNestedLevels), and deeper by an explicit stack on the
/// heap, whose depth memory alone limits. A level takes about 130 bytes of stack in an optimized
/// build (about 400 when a node's child is read through its type, as from an Any field), so a
/// walk needs 16 to 50 KiB of its caller's stack (more unoptimized or under AddressSanitizer);
/// the tests walk 1e6-deep graphs on a thread of 256 KiB.
constexpr uint32_t kStructuralWalkRecursion = 128;
/// The levels of kStructuralWalkRecursion that a nested run of the explicit stack counts for:
/// its C++ frames take about twice a level's stack.
constexpr uint32_t kStructuralWalkNestedLevels = 4;
/// The callback of StructuralVisitImpl: `fn(ctx, node)`.
using VisitCallback = void (*)(void* ctx, const ObjectRef& node);
/// The callback of StructuralTransformImpl: writes the replacement of `node` to `*out`, or
/// leaves it None to keep the node.
using TransformCallback = void (*)(void* ctx, const ObjectRef& node, Any* out);
FERRY_DLL void StructuralVisitImpl(const AnyView& root, VisitCallback fn, void* ctx);
FERRY_DLL Any StructuralTransformImpl(const AnyView& root, TransformCallback fn, void* ctx);
}  // namespace details

/// Calls `fn(const ObjectRef& node)` once on every object reachable from `root`, in post-order
/// (children before parents), sharing respected. A `root` that holds no object visits nothing.
template <typename F>
void StructuralVisit(const AnyView& root, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  if constexpr (std::is_function_v<Fn>) {
    // A function: the callback gets the address of a pointer to it.
    auto* callable = &fn;
    using Ptr = decltype(callable);
    details::StructuralVisitImpl(
        root, [](void* ctx, const ObjectRef& node) { (**static_cast<Ptr*>(ctx))(node); },
        &callable);
  } else {
    // An object: the callback gets its address (one load fewer per call).
    details::StructuralVisitImpl(
        root, [](void* ctx, const ObjectRef& node) { (*static_cast<Fn*>(ctx))(node); },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }
}

/// Rebuilds the graph under `root` bottom-up: `fn(const ObjectRef& node)` sees each object,
/// with its children already transformed, and returns its replacement: an object reference
/// (null keeps the node, and so does the node itself), an `Optional<T>` (nullopt keeps it) or
/// an `Any` (None keeps it).
/// Returns the transformed root (`root` itself when nothing changed). A `root` that holds no
/// object is returned as it is.
template <typename F>
Any StructuralTransform(const AnyView& root, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  if constexpr (std::is_function_v<Fn>) {
    auto* callable = &fn;
    using Ptr = decltype(callable);
    return details::StructuralTransformImpl(
        root,
        [](void* ctx, const ObjectRef& node, Any* out) {
          *out = Any((**static_cast<Ptr*>(ctx))(node));
        },
        &callable);
  } else {
    return details::StructuralTransformImpl(
        root,
        [](void* ctx, const ObjectRef& node, Any* out) {
          *out = Any((*static_cast<Fn*>(ctx))(node));
        },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }
}

/// StructuralTransform of a typed reference, returning the same type: a TypeError when the
/// root was replaced by something `T` cannot hold.
template <typename T, typename F, typename = std::enable_if_t<std::is_base_of_v<ObjectRef, T>>>
T StructuralTransform(const T& root, F&& fn) {
  return StructuralTransform(AnyView(root), std::forward<F>(fn)).template cast<T>();
}

}  // namespace ferry

#endif  // FERRY_REFLECTION_TRANSFORM_H_
