package dev.ferry;

import java.util.Iterator;

/**
 * A ferry.Dict (mutable, shared by every holder in every language) seen as a {@code
 * java.util.Map}. Iteration walks a snapshot taken when it starts. Make one with {@link
 * Ferry#newDict()}.
 */
public final class FerryDict extends BuiltinMap implements FerryObject {
  FerryDict(long address) {
    super(address);
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

  /** Sets {@code key} to {@code value}, as {@link #put} does. */
  @Override
  public void set(String key, Object value) {
    put(key, value);
  }

  /** The entries of a snapshot (ferry.DictToMap) taken now; {@code remove} removes from the dict. */
  @Override
  Iterator<Entry<Object, Object>> entries() {
    try (FerryMap snapshot = (FerryMap) Values.callBuiltin("ferry.DictToMap", this)) {
      Iterator<Entry<Object, Object>> items = snapshot.entries();
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
}
