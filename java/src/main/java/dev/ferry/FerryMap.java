package dev.ferry;

import java.util.Iterator;
import java.util.List;

/**
 * A ferry.Map seen as an immutable {@code java.util.Map}: lookups go to C++ (keys hash by value
 * for strings, bytes and numbers, by identity for other objects); writes throw {@code
 * UnsupportedOperationException}. Made from Java by passing any {@code java.util.Map}.
 */
public final class FerryMap extends BuiltinMap implements FerryObject {
  FerryMap(long address) {
    super(address);
  }

  /** Maps are immutable values: always {@code UnsupportedOperationException}. */
  @Override
  public void set(String key, Object value) {
    throw new UnsupportedOperationException("a ferry.Map is immutable");
  }

  @Override
  Iterator<Entry<Object, Object>> entries() {
    return Containers.pairs((List<?>) Values.callBuiltin("ferry.MapItems", this));
  }
}
