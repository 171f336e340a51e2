package dev.ferry;

import java.lang.foreign.MemorySegment;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A ferry.Map seen as an immutable {@code java.util.Map}: lookups go to C++ (keys hash by value
 * for strings and numbers, by identity for other objects); writes throw {@code
 * UnsupportedOperationException}. Made from Java by passing any {@code java.util.Map}.
 */
public final class FerryMap extends AbstractMap<Object, Object> implements FerryObject, Owned {
  private final Handle handle;

  FerryMap(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public int size() {
    return Math.toIntExact((Long) Values.callBuiltin("ferry.MapSize", this));
  }

  @Override
  public boolean containsKey(Object key) {
    return (Long) Values.callBuiltin("ferry.MapCount", this, key) != 0;
  }

  @Override
  public Object get(Object key) {
    return containsKey(key) ? Values.callBuiltin("ferry.MapGetItem", this, key) : null;
  }

  /** The map's value for {@code key} (a map view has no fields: this is the map lookup). */
  @Override
  public Object get(String key) {
    return get((Object) key);
  }

  /** Maps are immutable values: always {@code UnsupportedOperationException}. */
  @Override
  public void set(String key, Object value) {
    throw new UnsupportedOperationException("a ferry.Map is immutable");
  }

  @Override
  public Set<Entry<Object, Object>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Entry<Object, Object>> iterator() {
        return Containers.pairs((List<?>) Values.callBuiltin("ferry.MapItems", FerryMap.this));
      }

      @Override
      public int size() {
        return FerryMap.this.size();
      }
    };
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
