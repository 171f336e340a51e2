package dev.ferry;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

/**
 * A ferry.List (mutable, shared by every holder in every language) seen as a {@code
 * java.util.List}: reads and writes go to the one list C++ and Python see. Make one with
 * {@link Ferry#newList()}.
 */
public final class FerryList extends CellList implements FerryObject {
  FerryList(long address) {
    super(address);
  }

  @Override
  public Object set(int index, Object value) {
    Object old = get(index);
    write(index, value);
    return old;
  }

  @Override
  public boolean add(Object value) {
    write(-1, value);
    modCount++;
    return true;
  }

  /**
   * Converts `value` into a cell and stores it at `index` ({@code FerryListSetItem}), or appends
   * it when `index` is -1 ({@code FerryListAppend}).
   */
  private void write(long index, Object value) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cell = scratch.alloc(C.CELL);
      Values.store(value, cell, scratch, false);
      MemorySegment self = MemorySegment.ofAddress(handle.get(this));
      int rc = index < 0
          ? (int) C.LIST_APPEND.invokeExact(self, MemorySegment.ofAddress(cell))
          : (int) C.LIST_SET_ITEM.invokeExact(self, index, MemorySegment.ofAddress(cell));
      Values.check(rc);
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
}
