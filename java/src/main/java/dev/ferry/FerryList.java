package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A ferry.List (mutable, shared by every holder in every language) seen as a {@code
 * java.util.List}: reads and writes go to the one list C++ and Python see. Make one with
 * {@link Ferry#newList()}.
 */
public final class FerryList extends AbstractList<Object>
    implements FerryObject, Owned, RandomAccess {
  private final Handle handle;

  FerryList(long address) {
    this.handle = new Handle(this, address);
  }

  private long[] data() {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(16);
      int rc = (int) C.LIST_GET_DATA.invokeExact(
          MemorySegment.ofAddress(handle.get(this)), MemorySegment.ofAddress(out),
          MemorySegment.ofAddress(out + 8));
      Values.check(rc);
      return new long[] {C.ALL.get(JAVA_LONG, out), C.ALL.get(JAVA_LONG, out + 8)};
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  @Override
  public Object get(int index) {
    try {
      long[] d = data();
      if (index < 0 || index >= d[0]) {
        throw new IndexOutOfBoundsException("index " + index + " of a ferry.List of size " + d[0]);
      }
      return Values.load(d[1] + C.CELL * index, false);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public int size() {
    try {
      return Math.toIntExact(data()[0]);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public Object set(int index, Object value) {
    Object old = get(index);
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cell = scratch.alloc(C.CELL);
      Values.store(value, cell, scratch, false);
      int rc = (int) C.LIST_SET_ITEM.invokeExact(
          MemorySegment.ofAddress(handle.get(this)), (long) index, MemorySegment.ofAddress(cell));
      Values.check(rc);
      return old;
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(value);
    }
  }

  @Override
  public boolean add(Object value) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cell = scratch.alloc(C.CELL);
      Values.store(value, cell, scratch, false);
      int rc = (int) C.LIST_APPEND.invokeExact(
          MemorySegment.ofAddress(handle.get(this)), MemorySegment.ofAddress(cell));
      Values.check(rc);
      modCount++;
      return true;
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(value);
    }
  }

  @Override
  public void add(int index, Object value) {
    if (index < 0 || index > size()) {
      throw new IndexOutOfBoundsException("index " + index + " of a ferry.List of size " + size());
    }
    Values.callBuiltin("ferry.ListInsert", this, (long) index, value);
    modCount++;
  }

  @Override
  public Object remove(int index) {
    Object old = get(index);
    Values.callBuiltin("ferry.ListErase", this, (long) index, (long) index + 1);
    modCount++;
    return old;
  }

  @Override
  public void clear() {
    Values.callBuiltin("ferry.ListClear", this);
    modCount++;
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
}
