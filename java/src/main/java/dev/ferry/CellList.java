package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * What {@link FerryArray} and {@link FerryList} share: the handle that owns their reference,
 * and reads straight from the object's contiguous cells ({@code FerryArrayGetData} / {@code
 * FerryListGetData}: one downcall, then the cell read in place). Writes are FerryList's.
 */
abstract sealed class CellList extends AbstractList<Object> implements Owned, RandomAccess
    permits FerryArray, FerryList {
  final Handle handle;

  /** Takes over one reference to the object at `address`. */
  CellList(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public final Handle handle() {
    return handle;
  }

  /** "ferry.List" or "ferry.Array", for error messages. */
  final String typeName() {
    return this instanceof FerryList ? "ferry.List" : "ferry.Array";
  }

  /** The cells now: [size, address of the first]. */
  private long[] data() {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(16);
      MemorySegment self = MemorySegment.ofAddress(handle.get(this));
      MemorySegment size = MemorySegment.ofAddress(out);
      MemorySegment first = MemorySegment.ofAddress(out + 8);
      int rc = this instanceof FerryList
          ? (int) C.LIST_GET_DATA.invokeExact(self, size, first)
          : (int) C.ARRAY_GET_DATA.invokeExact(self, size, first);
      Values.check(rc);
      return new long[] {C.ALL.get(JAVA_LONG, out), C.ALL.get(JAVA_LONG, out + 8)};
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  @Override
  public final Object get(int index) {
    try {
      long[] d = data();
      if (index < 0 || index >= d[0]) {
        throw new IndexOutOfBoundsException(
            "index " + index + " of a " + typeName() + " of size " + d[0]);
      }
      return Values.load(d[1] + C.CELL * index, false);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public final int size() {
    try {
      return Math.toIntExact(data()[0]);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
