package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Values, objects, containers, tensors and the error paths of the API. */
class ApiTest {
  @BeforeAll
  static void load() {
    TestSupport.loadDemo();
  }

  @Test
  void plainValuesConvertBothWays() {
    assertEquals(5L, Ferry.convert(5L));
    assertEquals(5L, Ferry.convert(5));
    assertEquals(2.5, Ferry.convert(2.5));
    assertEquals(true, Ferry.convert(true));
    assertNull(Ferry.convert(null));
    assertEquals("short", Ferry.convert("short"));
    String longText = "a longer text with ünïcödé, past the inline cell";
    assertEquals(longText, Ferry.convert(longText));
    assertEquals(DataType.parse("float32x4"), Ferry.convert(DataType.parse("float32x4")));
    assertEquals("float32x4", DataType.parse("float32x4").toString());
    assertArrayEquals(new byte[] {0, 1, 2}, (byte[]) Ferry.convert(new byte[] {0, 1, 2}));
  }

  @Test
  void aValueJavaCannotPassIsATypeErrorNamingItsClass() {
    FerryException e = assertThrows(FerryException.class, () -> Ferry.convert(new Object()));
    assertEquals("TypeError", e.kind());
    assertTrue(e.getMessage().contains("java.lang.Object"), e.getMessage());
  }

  @Test
  void listsAndMapsBecomeArraysAndMapsViewedAsJavaCollections() {
    try (FerryArray a = (FerryArray) Ferry.convert(List.of(1L, "two", List.of(3L)))) {
      assertEquals("ferry.Array", a.typeKey());
      assertEquals(3, a.size());
      assertEquals(1L, a.get(0));
      assertEquals("two", a.get(1));
      assertEquals(List.of(3L), a.get(2));
      assertThrows(UnsupportedOperationException.class, () -> a.add(4L));
      assertThrows(IndexOutOfBoundsException.class, () -> a.get(3));
    }
    try (FerryMap m = (FerryMap) Ferry.convert(Map.of("k", 1L, "j", 2L))) {
      assertEquals(2, m.size());
      assertEquals(1L, m.get("k"));
      assertNull(m.get("missing"));
      assertEquals(Map.of("k", 1L, "j", 2L), Map.copyOf(m));
    }
    java.util.HashMap<String, Object> withNull = new java.util.HashMap<>();
    withNull.put("none", null);
    try (FerryMap m = (FerryMap) Ferry.convert(withNull)) {
      assertEquals(withNull, new java.util.HashMap<>(m));
      assertTrue(m.containsKey("none"));
    }
  }

  @Test
  void listAndDictAreSharedAndMutable() {
    try (FerryList l = Ferry.newList(); FerryDict d = Ferry.newDict()) {
      l.add(1L);
      l.add("x");
      l.add(0, 0L);
      l.set(2, "y");
      assertEquals(List.of(0L, 1L, "y"), List.copyOf(l));
      assertEquals(0L, l.remove(0));
      assertEquals(2, l.size());
      d.put("a", 1L);
      d.put("b", l);
      assertEquals(1L, d.get("a"));
      assertTrue(((FerryObject) d.get("b")).sameAs(l));
      assertEquals(1L, d.remove("a"));
      assertFalse(d.containsKey("a"));
      assertEquals(1, d.entrySet().size());
      l.clear();
      assertTrue(l.isEmpty());
    }
  }

  @Test
  void nodesHaveFieldsTypeKeysAndIdentity() {
    try (FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 7L))) {
      assertEquals("demo.IntImm", x.typeKey());
      assertEquals(7L, x.get("value"));
      FerryException e = assertThrows(FerryException.class, () -> x.get("nope"));
      assertEquals("AttributeError", e.kind());
      assertTrue(e.getMessage().contains("nope"), e.getMessage());
      // demo.IntImm is not a mutable type: a write is refused and changes nothing.
      FerryException write = assertThrows(FerryException.class, () -> x.set("value", 8L));
      assertEquals("AttributeError", write.kind());
      assertTrue(write.getMessage().contains("value"), write.getMessage());
      assertEquals(7L, x.get("value"));
      Object back = Ferry.loadJson(Ferry.saveJson(x));
      assertTrue(Ferry.structuralEqual(x, back));
      assertEquals(Ferry.structuralHash(x), Ferry.structuralHash(back));
      assertFalse(x.sameAs((FerryObject) back));
      assertTrue(x.sameAs((FerryObject) Ferry.convert(x)));
      // Two wrappers of one object are equal (and hash alike); of equal objects, not.
      Object again = Ferry.getGlobalFunc("demo.call_n").call(Function.of(a -> a[0]), 1L, x);
      assertEquals(x, again);
      assertEquals(x.hashCode(), again.hashCode());
      assertFalse(x.equals(back));
      assertTrue(x.toString().contains("7"), x.toString());
    }
  }

  @Test
  void makeNodeErrorsNameTheTypeAndTheField() {
    FerryException unknown =
        assertThrows(FerryException.class, () -> Ferry.makeNode("demo.Nope", Map.of()));
    assertTrue(unknown.getMessage().contains("demo.Nope"), unknown.getMessage());
    FerryException wrong = assertThrows(
        FerryException.class, () -> Ferry.makeNode("demo.IntImm", Map.of("value", "seven")));
    assertEquals("TypeError", wrong.kind());
    assertTrue(wrong.getMessage().contains("value"), wrong.getMessage());
  }

  @Test
  void aMissingGlobalIsAKeyErrorNamingIt() {
    FerryException e =
        assertThrows(FerryException.class, () -> Ferry.getGlobalFunc("no.such.global"));
    assertEquals("KeyError", e.kind());
    assertTrue(e.getMessage().contains("no.such.global"));
    assertNull(Ferry.getGlobalFunc("no.such.global", true));
  }

  @Test
  void wrongArgumentsAreTypeErrorsWithTheCppFrames() {
    Function add = Ferry.getGlobalFunc("demo.add");
    FerryException e = assertThrows(FerryException.class, () -> add.call("a", 2L));
    assertEquals("TypeError", e.kind());
    assertTrue(e.getMessage().contains("argument 0"), e.getMessage());
    assertFalse(e.frames().isEmpty(), "the C++ frames of the error");
    assertEquals("<C++>", e.getStackTrace()[0].getClassName());
    FerryException count = assertThrows(FerryException.class, () -> add.call(1L));
    assertEquals("TypeError", count.kind());
  }

  @Test
  void registeringATakenNameIsAnErrorUnlessOverridden() {
    Ferry.registerFunc("java.test.taken", args -> 1L, false);
    FerryException e = assertThrows(
        FerryException.class, () -> Ferry.registerFunc("java.test.taken", args -> 2L, false));
    assertTrue(e.getMessage().contains("java.test.taken"), e.getMessage());
    Ferry.registerFunc("java.test.taken", args -> 2L, true);
    assertEquals(2L, Ferry.getGlobalFunc("java.test.taken").call());
    assertTrue(Ferry.listGlobalFuncNames().contains("java.test.taken"));
    assertTrue(Ferry.removeGlobalFunc("java.test.taken"));
    assertFalse(Ferry.listGlobalFuncNames().contains("java.test.taken"));
  }

  @Test
  void aClosedObjectRefusesUseWithAClearError() {
    FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 1L));
    x.close();
    x.close(); // idempotent
    assertTrue(x.isClosed());
    FerryException e = assertThrows(FerryException.class, () -> x.get("value"));
    assertEquals("ValueError", e.kind());
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
    assertThrows(FerryException.class, () -> Ferry.saveJson(x));
    Function f = Ferry.getGlobalFunc("demo.add");
    f.close();
    assertThrows(FerryException.class, () -> f.call(1L, 2L));
    assertEquals("<closed ferry.Function>", f.toString());
  }

  @Test
  void tensorDataIsASegmentAndReadOnlyStaysReadOnly() {
    try (Tensor t = Tensor.empty(new long[] {2, 3}, DataType.FLOAT64)) {
      assertArrayEquals(new long[] {2, 3}, t.shape());
      assertArrayEquals(new long[] {3, 1}, t.strides());
      assertEquals(DataType.FLOAT64, t.dtype());
      assertEquals(6, t.numel());
      var data = t.data();
      assertEquals(48, data.byteSize());
      for (int i = 0; i < 6; i++) {
        data.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i + 0.5);
      }
      assertEquals(18.0, Ferry.getGlobalFunc("demo.tensor_sum").call(t));
      assertEquals(false, Ferry.getGlobalFunc("demo.tensor_is_read_only").call(t));
      try (Tensor ro = t.readOnlyView()) {
        assertTrue(ro.isReadOnly());
        assertEquals(true, Ferry.getGlobalFunc("demo.tensor_is_read_only").call(ro));
        assertTrue(ro.data().isReadOnly());
        assertEquals(2.5, ro.data().getAtIndex(ValueLayout.JAVA_DOUBLE, 2));
        RuntimeException write = assertThrows(RuntimeException.class,
            () -> ro.data().setAtIndex(ValueLayout.JAVA_DOUBLE, 0, 1.0));
        assertTrue(write.getMessage().contains("read-only"), write.getMessage());
        FerryException e = assertThrows(
            FerryException.class, () -> Ferry.getGlobalFunc("demo.tensor_sum").call(ro));
        assertEquals("ValueError", e.kind());
      }
    }
    Tensor made = (Tensor) Ferry.getGlobalFunc("demo.arange").call(4L);
    var data = made.data();
    made.close();
    // The segment keeps its own reference: still readable after the wrapper is closed.
    assertEquals(3.0, data.getAtIndex(ValueLayout.JAVA_DOUBLE, 3));
  }

  @Test
  void errorKindsFromCppArriveAsTheyWereThrown() {
    Function raise = Ferry.getGlobalFunc("demo.raise");
    for (String kind : List.of("ValueError", "IndexError", "KeyError", "MyOwnError")) {
      FerryException e = assertThrows(FerryException.class, () -> raise.call(kind, "boom"));
      assertEquals(kind, e.kind());
      assertEquals("boom", e.getMessage());
    }
    FerryException bad = assertThrows(FerryException.class, () -> Ferry.loadJson("{not json"));
    assertEquals("ValueError", bad.kind());
    assertInstanceOf(RuntimeException.class, bad);
  }

  @Test
  void aNameWithANulByteIsRefusedNotTruncated() {
    FerryException e =
        assertThrows(FerryException.class, () -> Ferry.getGlobalFunc("demo.add\0evil"));
    assertEquals("ValueError", e.kind());
    assertTrue(e.getMessage().contains("NUL"), e.getMessage());
    assertThrows(FerryException.class, () -> Ferry.loadLibrary("libdemo.so\0x"));
    try (FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 1L))) {
      assertThrows(FerryException.class, () -> x.get("value\0"));
    }
    // In values, NUL bytes are data and survive the trip.
    assertEquals("a\0b", Ferry.convert("a\0b"));
    assertEquals("a longer text\0with a NUL", Ferry.convert("a longer text\0with a NUL"));
  }

  @Test
  void deeplyNestedCallsBetweenJavaAndCppUnwindCleanly() {
    Function call = Ferry.getGlobalFunc("demo.call");
    Function[] self = new Function[1];
    long[] depth = new long[1];
    self[0] = Function.of(a -> {
      // Each level holds argument cells and a long string in this thread's scratch memory,
      // past its first block at this depth.
      depth[0]++;
      String text = "level text past the inline cell ".repeat(8);
      Object r = depth[0] < 300 ? call.call(self[0]) : 0L;
      assertEquals(text, Ferry.convert(text));
      return (Long) r + 1;
    });
    assertEquals(300L, call.call(self[0]));
    self[0].close();
  }
}
