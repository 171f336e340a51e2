package dev.ferry;

/**
 * The wrappers that are no Java collection ({@link Node}, {@link Function}, {@link Tensor}):
 * the handle that owns their reference, identity equality (C++ {@code same_as}) and the
 * object's repr as their text. The collections inherit {@code equals} from {@code AbstractList}
 * or {@code AbstractMap} instead (equal contents), so they hold their handle themselves; what
 * every wrapper shares ({@link FerryObject#address()}, {@link FerryObject#isClosed()}, {@link
 * FerryObject#close()}) lives in {@link FerryObject} over {@link Owned#handle()}.
 */
abstract sealed class Wrapper implements Owned permits Node, Function, Tensor {
  final Handle handle;

  /** Takes over one reference to the object at `address`. */
  Wrapper(long address) {
    this.handle = new Handle(this, address);
  }

  @Override
  public final Handle handle() {
    return handle;
  }

  /** Equal when both wrap the very same object (C++ {@code same_as}). */
  @Override
  public final boolean equals(Object other) {
    return other instanceof Owned o && o.handle().identity == handle.identity;
  }

  @Override
  public final int hashCode() {
    return Long.hashCode(handle.identity);
  }

  /** The object's repr; {@code <closed ...>} once closed. */
  @Override
  public final String toString() {
    if (!handle.isClosed()) {
      return Values.repr(this);
    }
    return this instanceof Node ? "<closed ferry object>"
        : "<closed ferry." + getClass().getSimpleName() + ">";
  }
}
