package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Java lambdas called from C++: results, arguments, and exceptions of every kind. */
class CallbackTest {
  @BeforeAll
  static void load() {
    TestSupport.loadDemo();
  }

  private static String caught(Function.Body body) {
    return (String) Ferry.getGlobalFunc("demo.catch").call(Function.of(body), 1L);
  }

  @Test
  void javaExceptionsReachCppAsErrorsOfTheirKind() {
    assertEquals("ValueError: bad value",
        caught(a -> { throw new IllegalArgumentException("bad value"); }));
    assertEquals("TypeError: not a long",
        caught(a -> { throw new ClassCastException("not a long"); }));
    assertEquals("IndexError: 7", caught(a -> { throw new IndexOutOfBoundsException("7"); }));
    assertEquals("KeyError: kind kept",
        caught(a -> { throw new FerryException("KeyError", "kind kept"); }));
    assertEquals("RuntimeError: java.lang.IllegalStateException: other",
        caught(a -> { throw new IllegalStateException("other"); }));
    assertEquals("RuntimeError: java.io.IOException: checked",
        caught(a -> { throw new java.io.IOException("checked"); }));
    // A lambda that casts its argument wrongly: a ClassCastException, no crash.
    String wrongCast = caught(a -> (String) a[0]);
    assertTrue(wrongCast.startsWith("TypeError: "), wrongCast);
    assertEquals("no error", caught(a -> null));
    // Every mapped class, subclasses by their first mapped ancestor.
    assertEquals("KeyError: none",
        caught(a -> { throw new java.util.NoSuchElementException("none"); }));
    assertEquals("NotImplementedError: later",
        caught(a -> { throw new UnsupportedOperationException("later"); }));
    assertEquals("ZeroDivisionError: / by zero", caught(a -> 1L / ((Long) a[0] - 1L)));
    assertEquals("MemoryError: full", caught(a -> { throw new OutOfMemoryError("full"); }));
    assertEquals("ValueError: For input string: \"x\"", caught(a -> Long.parseLong("x")));
    assertEquals("IndexError: Index 3 out of bounds for length 1",
        caught(a -> new long[] {0L}[(int) (3L * (Long) a[0])]));
    assertEquals("RuntimeError: java.lang.StackOverflowError: deep",
        caught(a -> { throw new StackOverflowError("deep"); }));
  }

  @Test
  void aJavaExceptionComesBackToJavaAsTheSameObject() {
    IllegalStateException thrown = new IllegalStateException("mine");
    Function cb = Function.of(a -> { throw thrown; });
    IllegalStateException back = assertThrows(
        IllegalStateException.class, () -> Ferry.getGlobalFunc("demo.call").call(cb));
    assertSame(thrown, back);
    // The C++ side of the trip is attached as a suppressed FerryException.
    FerryException cpp = assertInstanceOf(FerryException.class, back.getSuppressed()[0]);
    assertEquals("RuntimeError", cpp.kind());
    FerryException own = new FerryException("ValueError", "own");
    FerryException ownBack = assertThrows(FerryException.class,
        () -> Ferry.getGlobalFunc("demo.call").call(Function.of(a -> { throw own; })));
    assertSame(own, ownBack);
  }

  @Test
  void aCheckedExceptionComesBackWrappedWithItsCause() {
    Function cb = Function.of(a -> { throw new java.io.IOException("disk"); });
    FerryException e =
        assertThrows(FerryException.class, () -> Ferry.getGlobalFunc("demo.call").call(cb));
    assertEquals("RuntimeError", e.kind());
    assertInstanceOf(java.io.IOException.class, e.getCause());
  }

  @Test
  void aCppErrorInsideACallbackPassesThroughJavaWithItsKind() {
    Function raise = Ferry.getGlobalFunc("demo.raise");
    Function cb = Function.of(a -> raise.call("OverflowError", "deep"));
    FerryException e =
        assertThrows(FerryException.class, () -> Ferry.getGlobalFunc("demo.call").call(cb));
    assertEquals("OverflowError", e.kind());
    assertEquals("deep", e.getMessage());
  }

  @Test
  void callbacksTakeAndReturnEveryKindOfValue() {
    Function echo = Function.of(a -> a[0]);
    Function callN = Ferry.getGlobalFunc("demo.call_n");
    for (Object v : new Object[] {7L, 2.5, true, "text", "a longer text for a String object"}) {
      assertEquals(v, callN.call(echo, 3L, v));
    }
    assertEquals(List.of(1L, 2L), callN.call(echo, 1L, List.of(1L, 2L)));
    assertEquals(Map.of("k", "v"), Map.copyOf((Map<?, ?>) callN.call(echo, 1L, Map.of("k", "v"))));
    try (FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 3L))) {
      assertTrue(x.sameAs((FerryObject) callN.call(echo, 2L, x)));
    }
    // A lambda passed straight as an argument becomes a Function.
    assertEquals(42L, Ferry.getGlobalFunc("demo.call").call((Function.Body) a -> 42L));
    // Returning a value Ferry cannot hold is a TypeError in C++.
    assertEquals("TypeError", assertThrows(FerryException.class,
        () -> Ferry.getGlobalFunc("demo.call").call(Function.of(a -> new Object()))).kind());
  }

  @Test
  void aRegisteredJavaGlobalIsCalledBackThroughCpp() {
    Ferry.registerFunc("java.test.inc", a -> (Long) a[0] + 1, true);
    Function inc = Ferry.getGlobalFunc("java.test.inc");
    assertEquals(42L, Ferry.getGlobalFunc("demo.call").call(inc));
    assertEquals(11L, Ferry.getGlobalFunc("demo.call_n").call(inc, 5L, 10L));
    Ferry.removeGlobalFunc("java.test.inc");
  }

  /**
   * RecursionProbe: endless recursion through C++ at any frame layout and stack size is a
   * RuntimeError (the stack reserve of Java functions), never a JVM abort; nor is releasing a
   * Java function, an error raised from Java or a view made by Java at the stack's end.
   */
  @Test
  void endlessRecursionThroughCppIsAnErrorNotACrash() throws Exception {
    String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
        .toString();
    Process p = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED",
        "-Dferry.library.path=" + Ferry.libraryPath(), "-cp",
        System.getProperty("java.class.path"), "dev.ferry.RecursionProbe",
        TestSupport.demoLibrary().toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(),
        java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "the probe ended");
    assertEquals(0, p.exitValue(), out);
    List<String> expected = new java.util.ArrayList<>();
    for (long stack : new long[] {0, 256L << 10, 8L << 20}) {
      for (int frames = 0; frames <= (stack == 8L << 20 ? 1 : 8); frames++) {
        expected.add("stack " + stack + " frames " + frames + ": caught RuntimeError");
      }
    }
    expected.add("C++ thread: caught RuntimeError");
    // A Java exception from a body comes back to Java as the same object.
    expected.add("throws StackOverflowError: caught StackOverflowError");
    expected.add("overflows in Java: caught StackOverflowError");
    expected.add("closing at the stack's end: released");
    expected.add("errors and views released at the stack's end: released");
    expected.add("alive");
    assertEquals(expected, out.lines().toList(), out);
  }
}
