package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract program of DESIGN.md "Wave 3 / Java", compiled and run as written: the body of
 * {@link #program()} is copied verbatim. It runs with assertions on (-ea, the pom's argLine) in
 * the directory holding libdemo.so, so that its relative "libdemo.so" resolves.
 */
class ContractTest {
  @BeforeAll
  static void buildDemo() {
    TestSupport.demoLibrary();
  }

  @SuppressWarnings("unused")
  static void program() {
    // ---- the program, as DESIGN.md gives it ----
Ferry.loadLibrary("libdemo.so");
Function add = Ferry.getGlobalFunc("demo.add");             // FerryException if missing
long three = (Long) add.call(1L, 2L);
Function cb = Function.of(args -> (Long) args[0] + 1);       // a Java lambda as a Function
long r = (Long) Ferry.getGlobalFunc("demo.call").call(cb);
Ferry.registerFunc("java.twice", Function.of(args -> 2 * (Long) args[0]), false);
try (FerryObject x = Ferry.makeNode("demo.IntImm", java.util.Map.of("value", 7L))) {
    assert x.typeKey().equals("demo.IntImm") && (Long) x.get("value") == 7L;
    String text = Ferry.saveJson(x);
    assert Ferry.structuralEqual(x, Ferry.loadJson(text));
}
try { add.call("a", 2L); } catch (FerryException e) { assert e.kind().equals("TypeError"); }
    // ---- end of the program ----
  }

  @Test
  void theContractProgramRuns() {
    boolean enabled = false;
    assert enabled = true;
    assertTrue(enabled, "the contract's asserts need -ea");
    program();
    // What the program did, checked from outside it: java.twice is a global C++ calls.
    Function twice = Ferry.getGlobalFunc("java.twice");
    assertEquals(42L, twice.call(21L));
    assertEquals(82L, Ferry.getGlobalFunc("demo.call").call(twice));
    assertEquals(3L, Ferry.getGlobalFunc("demo.add").call(1L, 2L));
  }
}
