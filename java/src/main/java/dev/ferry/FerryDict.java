package dev.ferry;

import java.lang.foreign.MemorySegment;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A ferry.Dict (mutable, shared by every holder in every language) seen as a {@code
 * java.util.Map}. Iteration walks a snapshot taken when it starts. Make one with {@link
 * Ferry#newDict()}.
 */
public final class FerryDict extends AbstractMap<Object, Object> implements FerryObject, Owned {
  private final Handle handle;

  FerryDict(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public int size() {
    return Math.toIntExact((Long) Values.callBuiltin("ferry.DictSize", this));
  }

  @Override
  public boolean containsKey(Object key) {
    return (Long) Values.callBuiltin("ferry.DictCount", this, key) != 0;
  }

  @Override
  public Object get(Object key) {
    return containsKey(key) ? Values.callBuiltin("ferry.DictGetItem", this, key) : null;
  }

  @Override
  public Object put(Object key, Object value) {
    Object old = get(key);
    Values.callBuiltin("ferry.DictSetItem", this, key, value);
    return old;
  }

  @Override
  public Object remove(Object key) {
    Object old = get(key);
    Values.callBuiltin("ferry.DictErase", this, key);
    return old;
  }

  @Override
  public void clear() {
    Values.callBuiltin("ferry.DictClear", this);
  }

  /** The dict's value for {@code key} (a dict view has no fields: this is the lookup). */
  @Override
  public Object get(String key) {
    return get((Object) key);
  }

  /** Sets {@code key} to {@code value}, as {@link #put} does. */
  @Override
  public void set(String key, Object value) {
    put(key, value);
  }

  @Override
  public Set<Entry<Object, Object>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Entry<Object, Object>> iterator() {
        try (FerryMap snapshot = (FerryMap) Values.callBuiltin("ferry.DictToMap", FerryDict.this)) {
          Iterator<Entry<Object, Object>> items = snapshot.entrySet().iterator();
          return new Iterator<>() {
            private Object last;
            private boolean hasLast;

            @Override
            public boolean hasNext() {
              return items.hasNext();
            }

            @Override
            public Entry<Object, Object> next() {
              Entry<Object, Object> e = items.next();
              last = e.getKey();
              hasLast = true;
              return e;
            }

            @Override
            public void remove() {
              if (!hasLast) {
                throw new IllegalStateException("next() was not called");
              }
              FerryDict.this.remove(last);
              hasLast = false;
            }
          };
        }
      }

      @Override
      public int size() {
        return FerryDict.this.size();
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
