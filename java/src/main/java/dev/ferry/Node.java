package dev.ferry;

import java.lang.foreign.MemorySegment;

/** A Ferry object without a Java class of its own (a node, a Shape, an Error, ...). */
final class Node implements FerryObject, Owned {
  private final Handle handle;

  Node(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public Handle handle() {
    return handle;
  }

  @Override
  public MemorySegment address() {
    return MemorySegment.ofAddress(handle.get(this));
  }

  /** Equal when both wrap the very same object (C++ {@code same_as}). */
  @Override
  public boolean equals(Object other) {
    return other instanceof Owned o && o.handle().identity == handle.identity;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(handle.identity);
  }

  @Override
  public boolean isClosed() {
    return handle.isClosed();
  }

  @Override
  public void close() {
    handle.close();
  }

  @Override
  public String toString() {
    return handle.isClosed() ? "<closed ferry object>" : Values.repr(this);
  }
}
