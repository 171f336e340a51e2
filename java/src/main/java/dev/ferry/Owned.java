package dev.ferry;

/** What every wrapper of this package has: the handle that owns its reference. */
interface Owned {
  Handle handle();
}
