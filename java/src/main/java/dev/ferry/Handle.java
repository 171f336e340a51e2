package dev.ferry;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.LongAdder;

/**
 * One strong reference to a Ferry object, owned by one Java wrapper. It is released exactly
 * once: by {@link #close()} (try-with-resources), or by the {@link Cleaner} when the wrapper
 * becomes unreachable. The cleaning action (this object) never refers to the wrapper.
 */
final class Handle implements Runnable {
  private static final Cleaner CLEANER = Cleaner.create();
  /** References held by live wrappers, process-wide: what the leak tests count. */
  static final LongAdder LIVE = new LongAdder();

  private static final VarHandle ADDRESS;

  static {
    try {
      ADDRESS = MethodHandles.lookup().findVarHandle(Handle.class, "address", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // through ADDRESS
  private volatile long address;

  private final Cleaner.Cleanable cleanable;
  /** The address at construction: the object's identity while this handle holds it. */
  final long identity;

  /** Takes over one reference to `address` for `owner`. */
  Handle(Object owner, long address) {
    this.address = address;
    this.identity = address;
    LIVE.increment();
    this.cleanable = CLEANER.register(owner, this);
  }

  /** The object's address; a FerryException ("ValueError") once released. */
  long get(Object owner) {
    long a = address;
    if (a == 0) {
      throw new FerryException(
          "ValueError",
          "use of a closed "
              + (owner instanceof Node ? "FerryObject" : owner.getClass().getSimpleName())
              + ": it was closed and its reference released");
    }
    return a;
  }

  boolean isClosed() {
    return address == 0;
  }

  /**
   * Releases the reference now (idempotent). Released here before the Cleaner forgets it: a
   * StackOverflowError at either step leaves the reference held and the Cleaner to release it.
   */
  void close() {
    run();
    cleanable.clean();
  }

  @Override
  public void run() {
    long a = (long) ADDRESS.getAndSet(this, 0L);
    if (a != 0) {
      try {
        C.decRef(a);
      } catch (Throwable t) { // not released (a StackOverflowError): still held
        ADDRESS.setVolatile(this, a);
        throw t;
      }
      LIVE.decrement();
    }
  }
}
