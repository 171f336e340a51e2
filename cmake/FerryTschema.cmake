# FerryTschema.cmake: `ferry_tschema()` adds tschema check and update targets to a project.
#
#   include(FerryTschema)            # or find_package(ferry) once the config includes it
#   ferry_tschema(ir
#     SCHEMA    ${CMAKE_CURRENT_SOURCE_DIR}/ir_schema.py
#     IN_PLACE  ${CMAKE_CURRENT_SOURCE_DIR}/include/ir/expr.h
#     SCAN      ${CMAKE_CURRENT_SOURCE_DIR}/src/expr.cc
#     PYTHON    ${CMAKE_CURRENT_SOURCE_DIR}/python/ir/_nodes.py
#     CHECK_ALL)
#
# creates the targets
#   ir_tschema_update   runs `tschema generate` (writes only files whose bytes change)
#   ir_tschema_check    runs `tschema check` (fails with a unified diff when a file is stale)
# and, with ADD_TEST, a CTest test `ir_tschema_check` running the check.
#
# Arguments (paths are taken relative to CMAKE_CURRENT_SOURCE_DIR):
#   SCHEMA <files...>     schema files (required)
#   HEADER <file>         whole-file header for nodes without an in-place region
#   SOURCE <file>         registration source (FERRY_REGISTER_NODE_TYPE, constructor globals)
#   PYTHON <file>         Python module of register_object classes (and its .pyi)
#   PYI <file>            the stub, when not next to PYTHON
#   IN_PLACE <files...>   C++ files with `// tschema:` regions
#   SCAN <files...>       hand-written C++ files to validate against the schema
#   INCLUDE <headers...>  extra #include lines for HEADER and SOURCE
#   GUARD <name>          include guard of HEADER
#   COMMAND <cmd...>      how to run tschema (default: ${Python_EXECUTABLE} -m ferry.tschema,
#                         finding Python 3 when Python_EXECUTABLE is not set)
#   PYTHONPATH <dirs...>  prepended to PYTHONPATH for the command (e.g. a build tree's python/)
#   CHECK_ALL             make the check target part of `all`
#   ADD_TEST              add the check as a CTest test
include_guard(GLOBAL)

function(ferry_tschema name)
  set(options CHECK_ALL ADD_TEST)
  set(one_value HEADER SOURCE PYTHON PYI GUARD)
  set(multi_value SCHEMA IN_PLACE SCAN INCLUDE COMMAND PYTHONPATH)
  cmake_parse_arguments(PARSE_ARGV 1 TS "${options}" "${one_value}" "${multi_value}")
  if(TS_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ferry_tschema(${name}): unknown arguments: ${TS_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TS_SCHEMA)
    message(FATAL_ERROR "ferry_tschema(${name}): SCHEMA <files...> is required")
  endif()

  if(NOT TS_COMMAND)
    if(NOT Python_EXECUTABLE)
      find_package(Python 3.8 REQUIRED COMPONENTS Interpreter)
    endif()
    set(TS_COMMAND "${Python_EXECUTABLE}" -m ferry.tschema)
  endif()
  if(TS_PYTHONPATH)
    if(CMAKE_HOST_WIN32)
      set(sep "\\;")
    else()
      set(sep ":")
    endif()
    list(JOIN TS_PYTHONPATH "${sep}" pythonpath)
    if(DEFINED ENV{PYTHONPATH} AND NOT "$ENV{PYTHONPATH}" STREQUAL "")
      string(APPEND pythonpath "${sep}$ENV{PYTHONPATH}")
    endif()
    set(TS_COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${pythonpath}" ${TS_COMMAND})
  endif()

  set(args)
  foreach(file IN LISTS TS_SCHEMA)
    get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args "${file}")
  endforeach()
  foreach(kind HEADER SOURCE PYTHON PYI)
    if(TS_${kind})
      get_filename_component(file "${TS_${kind}}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      string(TOLOWER "${kind}" flag)
      list(APPEND args "--${flag}" "${file}")
    endif()
  endforeach()
  foreach(kind IN_PLACE SCAN)
    if(TS_${kind})
      string(TOLOWER "${kind}" flag)
      string(REPLACE "_" "-" flag "${flag}")
      list(APPEND args "--${flag}")
      foreach(file IN LISTS TS_${kind})
        get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
        list(APPEND args "${file}")
      endforeach()
    endif()
  endforeach()
  foreach(header IN LISTS TS_INCLUDE)
    list(APPEND args "--include" "${header}")
  endforeach()
  if(TS_GUARD)
    list(APPEND args "--guard" "${TS_GUARD}")
  endif()

  set(all_flag)
  if(TS_CHECK_ALL)
    set(all_flag ALL)
  endif()
  add_custom_target(${name}_tschema_update
    COMMAND ${TS_COMMAND} generate ${args}
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "tschema: regenerating ${name}"
    VERBATIM USES_TERMINAL)
  add_custom_target(${name}_tschema_check ${all_flag}
    COMMAND ${TS_COMMAND} check -q ${args}
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "tschema: checking ${name}"
    VERBATIM USES_TERMINAL)
  if(TS_ADD_TEST)
    add_test(NAME ${name}_tschema_check
      COMMAND ${TS_COMMAND} check -q ${args}
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
endfunction()
