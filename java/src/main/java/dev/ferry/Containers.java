package dev.ferry;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/** Helpers shared by the map views. */
final class Containers {
  private Containers() {}

  /**
   * Entries over a flat [k0, v0, k1, v1, ...] list (what ferry.MapItems returns), copied first
   * (values may be null), the list's own wrapper then released.
   */
  static Iterator<Map.Entry<Object, Object>> pairs(List<?> flat) {
    List<Object> items = new ArrayList<>(flat);
    if (flat instanceof FerryObject o) {
      o.close();
    }
    return new Iterator<>() {
      private int i;

      @Override
      public boolean hasNext() {
        return i + 1 < items.size();
      }

      @Override
      public Map.Entry<Object, Object> next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        Map.Entry<Object, Object> e =
            new AbstractMap.SimpleImmutableEntry<>(items.get(i), items.get(i + 1));
        i += 2;
        return e;
      }
    };
  }
}
