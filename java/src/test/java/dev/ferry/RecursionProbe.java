package dev.ferry;

/**
 * Run by CallbackTest in a fresh JVM (a crash must not take the test run with it): a lambda
 * that calls itself through C++ without end, on the main thread and on a thread with an 8 MB
 * stack (as C++ threads have). Prints what the first caller caught, then "alive".
 */
final class RecursionProbe {
  private RecursionProbe() {}

  public static void main(String[] args) throws Exception {
    Ferry.loadLibrary(args[0]);
    Function call = Ferry.getGlobalFunc("demo.call");
    Function[] self = new Function[1];
    self[0] = Function.of(a -> call.call(self[0]));
    Runnable recurse = () -> {
      try {
        call.call(self[0]);
        System.out.println("no error");
      } catch (FerryException e) {
        System.out.println("caught " + e.kind());
      } catch (StackOverflowError e) {
        System.out.println("caught StackOverflowError");
      }
    };
    recurse.run();
    Thread big = new Thread(null, recurse, "big-stack", 8L << 20);
    big.start();
    big.join();
    System.out.println("alive");
  }
}
