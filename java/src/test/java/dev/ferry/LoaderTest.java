package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Finding libferry, tried in fresh JVMs (the search runs once per process). */
class LoaderTest {
  /** Runs LoaderProbe in a new JVM with `env` changes; its output and exit code. */
  private static String[] probe(List<String> jvmArgs, java.util.Map<String, String> env)
      throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new java.util.ArrayList<>(List.of(java,
        "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path")));
    command.addAll(jvmArgs);
    command.add("dev.ferry.LoaderProbe");
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe JVM ended");
    return new String[] {out, String.valueOf(p.exitValue())};
  }

  @Test
  void aMissingLibraryIsAnImportErrorNamingEveryPlaceLooked() throws Exception {
    String[] r = probe(
        List.of("-Dferry.library.path=/nonexistent/ferry-lib", "-Djava.library.path=/nowhere"),
        java.util.Map.of("FERRY_LIBRARY_PATH", "/also/missing", "FERRY_PYTHON", "/no/python"));
    assertEquals("0", r[1], r[0]);
    String out = r[0];
    assertTrue(out.contains("ImportError"), out);
    assertTrue(out.contains("/nonexistent/ferry-lib"), out);
    assertTrue(out.contains("/also/missing"), out);
    assertTrue(out.contains("/nowhere"), out);
    assertTrue(out.contains("/no/python -m ferry --lib-dir"), out);
    assertTrue(out.contains("second use: ImportError"), "the failure is kept: " + out);
  }

  @Test
  void theLibraryIsFoundThroughEachRoute() throws Exception {
    Path lib = Ferry.libraryPath();
    String[] byEnv = probe(List.of("-Dferry.library.path="),
        java.util.Map.of("FERRY_LIBRARY_PATH", "/first/missing:" + lib.getParent()));
    assertTrue(byEnv[0].contains("loaded " + lib), byEnv[0]);
    String[] byJavaPath = probe(
        List.of("-Dferry.library.path=", "-Djava.library.path=" + lib.getParent()),
        java.util.Map.of("FERRY_LIBRARY_PATH", ""));
    assertTrue(byJavaPath[0].contains("loaded " + lib), byJavaPath[0]);
    // The Python package's answer: `python3 -m ferry --lib-dir` of this checkout.
    String[] byPython = probe(List.of("-Dferry.library.path=", "-Djava.library.path=/nowhere"),
        java.util.Map.of("FERRY_LIBRARY_PATH", "",
            "PYTHONPATH", TestSupport.sourceDir().resolve("python").toString(),
            "FERRY_BUILD_DIR", lib.getParent().toString()));
    assertTrue(byPython[0].contains("loaded " + lib), byPython[0]);
  }
}
