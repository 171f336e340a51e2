package dev.ferry;

import java.lang.foreign.MemorySegment;

/**
 * A Ferry object held from Java: a node made in C++, Python or by {@link Ferry#makeNode}, a
 * {@link Function}, a container ({@link FerryArray}, {@link FerryMap}, {@link FerryList},
 * {@link FerryDict}) or a {@link Tensor}. Each wrapper owns one reference, released by {@link
 * #close()} (try-with-resources) or, when the wrapper becomes unreachable, by a {@link
 * java.lang.ref.Cleaner}; a closed wrapper refuses every use with a {@link FerryException}
 * ("ValueError"). Closing a wrapper while another thread still uses it is a bug of the caller.
 *
 * <pre>{@code
 * try (FerryObject x = Ferry.makeNode("demo.IntImm", java.util.Map.of("value", 7L))) {
 *   long v = (Long) x.get("value");
 * }
 * }</pre>
 */
public sealed interface FerryObject extends AutoCloseable
    permits Node, Function, FerryArray, FerryMap, FerryList, FerryDict, Tensor {
  /** The object's address (a {@code FerryObjectHandle}), for hand-written FFM calls. */
  default MemorySegment address() {
    return MemorySegment.ofAddress(Values.addr(this));
  }

  /** The registered type key, e.g. {@code "demo.IntImm"}. */
  default String typeKey() {
    try {
      return Values.typeKeyOf(C.typeIndexOf(Values.addr(this)));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** The runtime type index. */
  default int typeIndex() {
    try {
      return C.typeIndexOf(Values.addr(this));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** Reads the field {@code name}, converted as a call's result ("AttributeError" if none). */
  default Object get(String name) {
    return Values.getAttr(this, name);
  }

  /**
   * Writes the field {@code name} of an object whose type is mutable ("AttributeError" for an
   * unknown field or a read-only type, "TypeError" for a value that does not convert).
   */
  default void set(String name, Object value) {
    Values.setAttr(this, name, value);
  }

  /** Whether both are the very same object (C++ {@code same_as}). */
  default boolean sameAs(FerryObject other) {
    return other != null && Values.addr(this) == Values.addr(other);
  }

  /** The strong reference count of the object (every holder, in every language). */
  default int useCount() {
    try {
      return C.refCountOf(Values.addr(this));
    } finally {
      java.lang.ref.Reference.reachabilityFence(this);
    }
  }

  /** Whether this wrapper was closed. */
  default boolean isClosed() {
    return Owned.of(this).isClosed();
  }

  /** Releases this wrapper's reference; later uses of the wrapper throw. Idempotent. */
  @Override
  default void close() {
    Owned.of(this).close();
  }
}
