# Fails when libcoll (the runtime: libcoll/src, its public headers libcoll/include, and the
# libraries beside it) reaches into the link emulator (emulator/, coll_emulator), or when the
# emulator's public header is back among libcoll's. The runtime offers the seams (a transport
# wrapper registry, core/cost_clock.hpp); the emulator plugs into them. Run by ctest:
#   cmake -DSOURCE_DIR=<repository> -P runtime_apart.cmake
include(${CMAKE_CURRENT_LIST_DIR}/report_violations.cmake)
set(EMULATOR_DIR "${SOURCE_DIR}/emulator")
if(NOT IS_DIRECTORY "${EMULATOR_DIR}/src" OR NOT IS_DIRECTORY "${SOURCE_DIR}/libcoll/src")
  message(FATAL_ERROR "runtime_apart: no emulator/src or libcoll/src under '${SOURCE_DIR}'")
endif()
file(GLOB_RECURSE files "${SOURCE_DIR}/libcoll/*.hpp" "${SOURCE_DIR}/libcoll/*.cc"
     "${SOURCE_DIR}/libcoll/*.h" "${SOURCE_DIR}/libcoll/*.c" "${SOURCE_DIR}/libcoll/*.in"
     "${SOURCE_DIR}/libcoll/*CMakeLists.txt")
set(violations "")
set(checked 0)
foreach(path IN LISTS files)
  file(RELATIVE_PATH file "${SOURCE_DIR}" "${path}")
  file(STRINGS "${path}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line IN LISTS includes)
    math(EXPR checked "${checked} + 1")
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*" "\\1" target "${line}")
    if(target MATCHES "^emulator/" OR EXISTS "${EMULATOR_DIR}/src/${target}" OR
       EXISTS "${EMULATOR_DIR}/include/${target}")
      string(APPEND violations "\n  ${file} includes \"${target}\", the emulator's")
    endif()
  endforeach()
  # Calls into it, or a build that links it.
  file(STRINGS "${path}" uses REGEX "cluster_clock::|emulator::|coll_emulator[ \t)]")
  foreach(line IN LISTS uses)
    string(STRIP "${line}" line)
    string(APPEND violations "\n  ${file} uses the emulator: ${line}")
  endforeach()
endforeach()
if(EXISTS "${SOURCE_DIR}/libcoll/include/coll/cluster_clock.hpp")
  string(APPEND violations "\n  libcoll/include/coll/cluster_clock.hpp: the emulator's clock is "
         "public in emulator/include/emulator/cluster_clock.hpp, not libcoll's")
endif()
report_violations(runtime_apart "${SOURCE_DIR}/libcoll" "libcoll reaches into the emulator"
                  "of libcoll checked, none is the emulator's")
