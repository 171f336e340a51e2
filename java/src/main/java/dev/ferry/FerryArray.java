package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A ferry.Array seen as an immutable {@code java.util.List}: elements are converted as a call's
 * results are; writes throw {@code UnsupportedOperationException} (Arrays are values: make a new
 * one with {@link Ferry#convert}). Made from Java by passing any {@code java.util.List}.
 */
public final class FerryArray extends AbstractList<Object>
    implements FerryObject, Owned, RandomAccess {
  private final Handle handle;

  FerryArray(long address) {
    this.handle = new Handle(this, address);
  }

  /** The array's cells: [size, address of the first]. */
  private long[] data() {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(16);
      int rc = (int) C.ARRAY_GET_DATA.invokeExact(
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
        throw new IndexOutOfBoundsException("index " + index + " of a ferry.Array of size " + d[0]);
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
