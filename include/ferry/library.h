/// \file ferry/library.h
/// Loading shared libraries that register globals and node types. function.h includes it, so
/// code that loads libraries through ferry/function.h or ferry/ferry.h keeps compiling.
///
///     ferry::LoadLibrary("build/libmy_ops.so");  // its FERRY_REGISTER_GLOBALs are now callable
#ifndef FERRY_LIBRARY_H_
#define FERRY_LIBRARY_H_

#include <string>  // the path

#include "ferry/base.h"

namespace ferry {

/// Loads a shared library, running its registrations; it stays loaded for the process, so the
/// objects and functions it created stay valid. RuntimeError naming the path and the reason
/// when the file is missing, fails to load, or registers a name that is taken.
FERRY_DLL void LoadLibrary(const std::string& path);

}  // namespace ferry

#endif  // FERRY_LIBRARY_H_
