package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Modifier;
import java.util.AbstractList;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plumbing the wrappers share (FerryObject's defaults over the handle, {@code Wrapper},
 * {@code CellList}, {@code BuiltinMap}), driven through every kind that uses it, and the public
 * shape of the wrapper classes, which that sharing must not change.
 */
class WrapperTest {
  @BeforeAll
  static void load() {
    TestSupport.loadDemo();
  }

  /** One fresh wrapper of each kind, by the name a use after close gives it. */
  private static Map<String, FerryObject> oneOfEachKind() {
    Map<String, FerryObject> kinds = new LinkedHashMap<>();
    kinds.put("FerryObject", Ferry.makeNode("demo.IntImm", Map.of("value", 7L)));
    kinds.put("Function", Function.of(a -> 1L));
    kinds.put("Tensor", Tensor.empty(new long[] {2}, DataType.FLOAT64));
    kinds.put("FerryArray", (FerryArray) Ferry.convert(List.of(1L, 2L)));
    kinds.put("FerryList", Ferry.newList());
    kinds.put("FerryMap", (FerryMap) Ferry.convert(Map.of("k", 1L)));
    kinds.put("FerryDict", Ferry.newDict());
    return kinds;
  }

  @Test
  void everyKindClosesOnceAndThenRefusesUseNamingItsKind() {
    for (Map.Entry<String, FerryObject> e : oneOfEachKind().entrySet()) {
      String kind = e.getKey();
      FerryObject o = e.getValue();
      assertFalse(o.isClosed(), kind);
      assertTrue(o.address().address() != 0, kind);
      FerryObject other = (FerryObject) Ferry.convert(o); // a second wrapper of the object
      assertEquals(o.address(), other.address(), kind);
      int refs = other.useCount();
      o.close();
      assertTrue(o.isClosed(), kind);
      assertFalse(other.isClosed(), kind);
      assertEquals(refs - 1, other.useCount(), kind + ": close released one reference");
      o.close(); // idempotent
      assertEquals(refs - 1, other.useCount(), kind + ": a second close released nothing");
      FerryException use = assertThrows(FerryException.class, o::address, kind);
      assertEquals("ValueError", use.kind(), kind);
      assertTrue(use.getMessage().contains("closed " + kind), use.getMessage());
      assertThrows(FerryException.class, o::typeKey, kind);
      assertThrows(FerryException.class, () -> Ferry.saveJson(o), kind);
      other.close();
    }
  }

  @Test
  void nodesFunctionsAndTensorsAreEqualByIdentityAndSayWhenClosed() {
    FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 7L));
    FerryObject sameX = (FerryObject) Ferry.convert(x);
    FerryObject equalX = Ferry.makeNode("demo.IntImm", Map.of("value", 7L));
    Function f = Ferry.getGlobalFunc("demo.add");
    Function sameF = Ferry.getGlobalFunc("demo.add");
    Tensor t = Tensor.empty(new long[] {2}, DataType.FLOAT64);
    Tensor sameT = (Tensor) Ferry.convert(t);
    assertEquals(x, sameX);
    assertEquals(x.hashCode(), sameX.hashCode());
    assertNotEquals(x, equalX, "structurally equal, but another object");
    assertEquals(f, sameF);
    assertEquals(f.hashCode(), sameF.hashCode());
    assertEquals(t, sameT);
    assertNotEquals(f, x);
    assertNotEquals(t, f);
    assertTrue(x.toString().contains("7"), x.toString());
    x.close();
    f.close();
    t.close();
    assertEquals("<closed ferry object>", x.toString());
    assertEquals("<closed ferry.Function>", f.toString());
    assertEquals("<closed ferry.Tensor>", t.toString());
    // A closed wrapper keeps its identity: still equal to an open one of the same object.
    assertEquals(sameX, x);
    assertEquals(3L, sameF.call(1L, 2L));
    for (FerryObject o : List.of(sameX, equalX, sameF, sameT)) {
      o.close();
    }
  }

  @Test
  void arraysAndListsReadTheirCellsAndNameTheirTypeInIndexErrors() {
    try (FerryArray a = (FerryArray) Ferry.convert(List.of(1L, "two", 3.0));
        FerryList l = Ferry.newList()) {
      l.add(1L);
      l.add("two");
      l.add(3.0);
      assertEquals(3, a.size());
      assertEquals(3, l.size());
      assertEquals(a, l, "equal contents: equal java.util.Lists");
      assertEquals(List.of(1L, "two", 3.0), a);
      for (int bad : new int[] {3, -1}) {
        IndexOutOfBoundsException ea = assertThrows(IndexOutOfBoundsException.class,
            () -> a.get(bad));
        assertEquals("index " + bad + " of a ferry.Array of size 3", ea.getMessage());
        IndexOutOfBoundsException el = assertThrows(IndexOutOfBoundsException.class,
            () -> l.get(bad));
        assertEquals("index " + bad + " of a ferry.List of size 3", el.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> l.set(bad, 0L));
      }
      assertEquals(List.of(1L, "two", 3.0), l, "a refused set changed nothing");
      assertEquals("two", l.set(1, "deux"));
      assertTrue(l.add(List.of(4L)));
      assertEquals(List.of(1L, "deux", 3.0, List.of(4L)), l);
      assertThrows(UnsupportedOperationException.class, () -> a.set(0, 0L));
      FerryException bad = assertThrows(FerryException.class, () -> l.add(new Object()));
      assertEquals("TypeError", bad.kind());
      assertEquals(4, l.size(), "a value that does not convert is not appended");
    }
  }

  @Test
  void mapsAndDictsLookUpThroughTheirOwnBuiltins() {
    Map<String, Object> entries = new LinkedHashMap<>();
    entries.put("a", 1L);
    entries.put("none", null);
    try (FerryMap m = (FerryMap) Ferry.convert(entries); FerryDict d = Ferry.newDict()) {
      d.putAll(entries);
      for (Map<Object, Object> map : List.<Map<Object, Object>>of(m, d)) {
        String what = map.getClass().getSimpleName();
        assertEquals(2, map.size(), what);
        assertTrue(map.containsKey("a"), what);
        assertTrue(map.containsKey("none"), what + ": a key whose value is null");
        assertFalse(map.containsKey("b"), what);
        assertEquals(1L, map.get("a"), what);
        assertEquals(1L, map.get((Object) "a"), what);
        assertNull(map.get("none"), what);
        assertNull(map.get("b"), what);
        assertEquals(2, map.entrySet().size(), what);
        assertEquals(entries, new LinkedHashMap<>(map), what);
      }
      assertEquals(m, d, "equal entries: equal java.util.Maps");
      UnsupportedOperationException write =
          assertThrows(UnsupportedOperationException.class, () -> m.set("a", 2L));
      assertTrue(write.getMessage().contains("immutable"), write.getMessage());
      assertThrows(UnsupportedOperationException.class, () -> m.put("a", 2L));
      d.set("a", 2L);
      assertEquals(2L, d.get("a"));
      assertEquals(1L, m.get("a"), "the map is a value: the dict's write does not reach it");
    }
  }

  @Test
  void aDictWalksASnapshotAndItsIteratorRemovesFromTheDict() {
    try (FerryDict d = Ferry.newDict()) {
      d.put("a", 1L);
      d.put("b", 2L);
      d.put("c", 3L);
      List<Object> seen = new ArrayList<>();
      Iterator<Map.Entry<Object, Object>> it = d.entrySet().iterator();
      assertThrows(IllegalStateException.class, it::remove, "remove before next");
      while (it.hasNext()) {
        Map.Entry<Object, Object> e = it.next();
        seen.add(e.getKey());
        d.put("added-" + e.getKey(), 0L); // not in the walk: it walks a snapshot
        if (e.getKey().equals("b")) {
          it.remove();
          assertThrows(IllegalStateException.class, it::remove, "a second remove");
        }
      }
      assertEquals(List.of("a", "b", "c"), seen);
      assertFalse(d.containsKey("b"));
      assertEquals(Set.of("a", "c", "added-a", "added-b", "added-c"), d.keySet());
    }
  }

  @Test
  void theWrapperClassesKeepTheirPublicShape() {
    Set<String> permitted = Arrays.stream(FerryObject.class.getPermittedSubclasses())
        .map(Class::getSimpleName).collect(Collectors.toSet());
    assertEquals(Set.of("Node", "Function", "FerryArray", "FerryMap", "FerryList", "FerryDict",
        "Tensor"), permitted);
    for (Class<?> c : List.of(Function.class, Tensor.class, FerryArray.class, FerryList.class,
        FerryMap.class, FerryDict.class)) {
      assertTrue(Modifier.isPublic(c.getModifiers()) && Modifier.isFinal(c.getModifiers()),
          c.getName());
      assertTrue(FerryObject.class.isAssignableFrom(c), c.getName());
      assertTrue(AutoCloseable.class.isAssignableFrom(c), c.getName());
    }
    for (Class<?> c : List.of(FerryArray.class, FerryList.class)) {
      assertTrue(AbstractList.class.isAssignableFrom(c), c.getName());
      assertTrue(RandomAccess.class.isAssignableFrom(c), c.getName());
    }
    for (Class<?> c : List.of(FerryMap.class, FerryDict.class)) {
      assertTrue(AbstractMap.class.isAssignableFrom(c), c.getName());
    }
    try (FerryList l = Ferry.newList()) {
      assertInstanceOf(List.class, l);
    }
  }
}
