/// \file ferry/version.h
/// The one place the Ferry version number is kept; readable from C and C++.
#ifndef FERRY_VERSION_H_
#define FERRY_VERSION_H_

#define FERRY_VERSION_MAJOR 0
#define FERRY_VERSION_MINOR 1
#define FERRY_VERSION_PATCH 0
#define FERRY_VERSION_STRING "0.1.0"

#endif  // FERRY_VERSION_H_
