# Installs libferry, its headers and a CMake package config, so a project can
#   find_package(ferry CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE ferry::ferry)
#
# Under scikit-build-core (`pip install .`) everything goes inside the Python package:
# ferry/lib/libferry.so, ferry/include/ferry/*.h and ferry/share/cmake/ferry/, which is what
# `python -m ferry --lib-dir/--include-dir/--cmake-dir` print.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(SKBUILD)
  set(FERRY_INSTALL_LIBDIR ferry/lib)
  set(FERRY_INSTALL_INCLUDEDIR ferry/include)
  set(FERRY_INSTALL_CMAKEDIR ferry/share/cmake/ferry)
  set_target_properties(ferry PROPERTIES INSTALL_RPATH "$ORIGIN")
else()
  set(FERRY_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(FERRY_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
  set(FERRY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
endif()

install(TARGETS ferry EXPORT ferryTargets
        LIBRARY DESTINATION ${FERRY_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${FERRY_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${FERRY_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ferry DESTINATION ${FERRY_INSTALL_INCLUDEDIR})
install(EXPORT ferryTargets NAMESPACE ferry:: DESTINATION ${FERRY_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ferryConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ferryConfig.cmake INSTALL_DESTINATION ${FERRY_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ferryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ferryConfig.cmake ${PROJECT_BINARY_DIR}/ferryConfigVersion.cmake
        DESTINATION ${FERRY_INSTALL_CMAKEDIR})
if(EXISTS ${PROJECT_SOURCE_DIR}/cmake/FerryTschema.cmake)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/FerryTschema.cmake DESTINATION ${FERRY_INSTALL_CMAKEDIR})
endif()
if(SKBUILD)
  # The documentation, for `python -m ferry --docs` (tschema --help points there).
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ferry/docs FILES_MATCHING PATTERN "*.md")
endif()
