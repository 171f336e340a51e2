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

/// Unloads a library LoadLibrary loaded: its globals and type keys leave the registries at once
/// (a later lookup is a clean "not found"). Objects and Functions its code made stay valid and
/// keep it mapped; after the last one dies it is dlclose-d (from a thread of libferry's, a
/// moment later), and the path may be loaded again. RuntimeError naming the path when no
/// LoadLibrary loaded it. docs/python.md "Unloading a library" says what is promised.
FERRY_DLL void UnloadLibrary(const std::string& path);

}  // namespace ferry

#endif  // FERRY_LIBRARY_H_
