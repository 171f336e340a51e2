package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The {@code java} blocks of the pages listed in {@link #PAGES} compile (javac -Xlint:all
 * -Werror) and run, in order, in this JVM, in the directory holding libdemo.so. Each block is
 * the body of a method with {@code dev.ferry.*} and {@code java.util.*} imported; assertions
 * are on. tests/docs checks that every page with java blocks is listed here.
 */
class DocsTest {
  static final List<String> PAGES = List.of("docs/java.md");

  record Block(String page, int line, String code) {}

  static List<Block> blocks(String page) throws IOException {
    List<String> lines = Files.readAllLines(TestSupport.sourceDir().resolve(page));
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals("```java")) {
        int start = i + 1;
        StringBuilder code = new StringBuilder();
        for (i = start; !lines.get(i).strip().equals("```"); i++) {
          code.append(lines.get(i)).append('\n');
        }
        blocks.add(new Block(page, start + 1, code.toString()));
      }
    }
    return blocks;
  }

  static final class Source extends SimpleJavaFileObject {
    final String name;
    final String text;

    Source(String className, String text) {
      super(URI.create("string:///" + className + ".java"), Kind.SOURCE);
      this.name = className;
      this.text = text;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return text;
    }
  }

  @Test
  void everyJavaBlockOfTheDocsCompilesAndRuns() throws Exception {
    TestSupport.demoLibrary();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    Path out = Files.createTempDirectory("ferry-docs");
    int ran = 0;
    List<Block> all = new ArrayList<>();
    List<Source> sources = new ArrayList<>();
    for (String page : PAGES) {
      List<Block> blocks = blocks(page);
      assertFalse(blocks.isEmpty(), page + " has java blocks");
      for (Block block : blocks) {
        String name = "Snippet" + all.size() + "Line" + block.line();
        sources.add(new Source(name, "import dev.ferry.*;\nimport java.util.*;\n"
            + "public class " + name + " {\n"
            + "  public static void run() throws Exception {\n"
            + block.code() + "  }\n}\n"));
        all.add(block);
      }
    }
    // One javac run for every block (a run per block costs a second each).
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    try (StandardJavaFileManager files =
        javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
      boolean ok = javac.getTask(null, files, diagnostics,
          List.of("-Xlint:all", "-Werror", "-proc:none", "-d", out.toString(),
              "-cp", System.getProperty("java.class.path")),
          null, sources).call();
      StringBuilder why = new StringBuilder();
      diagnostics.getDiagnostics().forEach(d -> {
        Block block = all.get(sources.indexOf((Source) d.getSource()));
        why.append("\n  ").append(block.page()).append(':')
            .append(block.line() + d.getLineNumber() - 5).append(": ")
            .append(d.getMessage(null));
      });
      assertTrue(ok && diagnostics.getDiagnostics().isEmpty(), "java blocks do not compile:" + why);
    }
    try (URLClassLoader loader = new URLClassLoader(
        new URL[] {out.toUri().toURL()}, DocsTest.class.getClassLoader())) {
      loader.setDefaultAssertionStatus(true);
      for (int i = 0; i < all.size(); i++) {
        Block block = all.get(i);
        try {
          loader.loadClass(sources.get(i).name).getMethod("run").invoke(null);
        } catch (InvocationTargetException e) {
          throw new AssertionError(
              block.page() + ":" + block.line() + ": the block failed", e.getCause());
        }
        ran++;
      }
    }
    assertEquals(ran, PAGES.stream().mapToLong(p -> {
      try {
        return blocks(p).size();
      } catch (IOException e) {
        throw new AssertionError(e);
      }
    }).sum());
  }
}
