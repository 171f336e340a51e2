package dev.ferry;

/** Run by LoaderTest in a fresh JVM: tries to load libferry and prints what happened. */
final class LoaderProbe {
  private LoaderProbe() {}

  public static void main(String[] args) {
    try {
      Ferry.ensureLoaded();
      System.out.println("loaded " + Ferry.libraryPath());
    } catch (FerryException e) {
      System.out.println(e.kind() + ": " + e.getMessage());
      try {
        Ferry.getGlobalFunc("demo.add");
      } catch (FerryException again) {
        System.out.println("second use: " + again.kind());
      }
    }
  }
}
