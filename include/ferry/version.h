/// \file ferry/version.h
/// The one place the Ferry version number is kept; readable from C and C++.
#ifndef FERRY_VERSION_H_
#define FERRY_VERSION_H_

#define FERRY_VERSION_MAJOR 0
#define FERRY_VERSION_MINOR 1
#define FERRY_VERSION_PATCH 0
#define FERRY_VERSION_STRING "0.1.0"

/// The version of the binary interface between libferry and the libraries built against these
/// headers. Raised whenever a struct of c_api.h or an object the headers construct inline
/// (FunctionObj, StringObj, ErrorObj, ArrayObj, MapObj, TensorObj, ...) changes its layout, or
/// an inline function starts relying on new behaviour of libferry; LoadLibrary refuses a
/// library built for another one (docs/c_api.md, "Compatibility").
#define FERRY_ABI_VERSION 1

#endif  // FERRY_VERSION_H_
