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
