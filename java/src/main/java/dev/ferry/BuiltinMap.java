package dev.ferry;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Set;

/**
 * What {@link FerryMap} and {@link FerryDict} share: the handle that owns their reference, and
 * lookups by libferry's builtins ({@code ferry.MapSize} / {@code ferry.DictSize}, {@code Count},
 * {@code GetItem}), where keys hash by value for strings, bytes and numbers and by identity for
 * other objects. Each says how its entries are walked ({@link #entries()}).
 */
abstract sealed class BuiltinMap extends AbstractMap<Object, Object> implements Owned
    permits FerryMap, FerryDict {
  final Handle handle;

  /** Takes over one reference to the object at `address`. */
  BuiltinMap(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public final Handle handle() {
    return handle;
  }

  private boolean isDict() {
    return this instanceof FerryDict;
  }

  @Override
  public final int size() {
    return Math.toIntExact(
        (Long) Values.callBuiltin(isDict() ? "ferry.DictSize" : "ferry.MapSize", this));
  }

  @Override
  public final boolean containsKey(Object key) {
    return (Long) Values.callBuiltin(isDict() ? "ferry.DictCount" : "ferry.MapCount", this, key)
        != 0;
  }

  @Override
  public final Object get(Object key) {
    return containsKey(key)
        ? Values.callBuiltin(isDict() ? "ferry.DictGetItem" : "ferry.MapGetItem", this, key)
        : null;
  }

  /** The value for {@code key} (a map view has no fields: this is the map lookup). */
  public final Object get(String key) {
    return get((Object) key);
  }

  /** The entries, walked as {@link #entries()} says; sized by {@link #size()}. */
  @Override
  public final Set<Entry<Object, Object>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Entry<Object, Object>> iterator() {
        return entries();
      }

      @Override
      public int size() {
        return BuiltinMap.this.size();
      }
    };
  }

  /** A walk over the entries. */
  abstract Iterator<Entry<Object, Object>> entries();
}
