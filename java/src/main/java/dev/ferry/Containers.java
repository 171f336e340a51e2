package dev.ferry;

import java.util.AbstractMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/** Helpers shared by the map views. */
final class Containers {
  private Containers() {}

  /** Entries over a flat [k0, v0, k1, v1, ...] list (what ferry.MapItems returns). */
  static Iterator<Map.Entry<Object, Object>> pairs(List<?> flat) {
    List<?> items = List.copyOf(flatCopy(flat));
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
            new AbstractMap.SimpleImmutableEntry<>(unbox(items.get(i)), unbox(items.get(i + 1)));
        i += 2;
        return e;
      }
    };
  }

  private static final Object NULL = new Object();

  private static List<Object> flatCopy(List<?> flat) {
    java.util.ArrayList<Object> copy = new java.util.ArrayList<>(flat.size());
    for (Object o : flat) {
      copy.add(o == null ? NULL : o);
    }
    return copy;
  }

  private static Object unbox(Object o) {
    return o == NULL ? null : o;
  }
}
