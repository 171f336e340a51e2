package dev.ferry;

/**
 * What every wrapper of this package has: the handle that owns its reference. Every {@link
 * FerryObject} is one (the interface is sealed), which is how its default methods reach the
 * handle.
 */
interface Owned {
  Handle handle();

  /** The handle of a wrapper. */
  static Handle of(FerryObject o) {
    return ((Owned) o).handle();
  }
}
