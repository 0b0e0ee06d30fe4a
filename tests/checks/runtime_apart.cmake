# Fails when libcoll (the runtime: libcoll/src, its public headers libcoll/include, the tools
# library libcoll/tools and the libraries beside it) reaches into a component built on it:
#   emulator  the link emulator (emulator/, coll_emulator). The runtime offers the seams (a
#             transport wrapper registry, core/cost_clock.hpp); the emulator plugs into them,
#             and its public header is not among libcoll's.
#   study     the paper study (study/, coll_study): the iteration simulator, compute profiles,
#             fusion policies, strategies, model and paper tables. The tools use it; the
#             runtime's fusion is the fusion buffer, which plans with none of it.
# An include of the component's headers, a call into its namespace or a build that links it is a
# violation. Run by ctest:
#   cmake -DSOURCE_DIR=<repository> -DCOMPONENT=emulator|study -P runtime_apart.cmake
include(${CMAKE_CURRENT_LIST_DIR}/report_violations.cmake)
if(COMPONENT STREQUAL "emulator")
  set(uses_pattern "cluster_clock::|emulator::|coll_emulator[ \t)]")
elseif(COMPONENT STREQUAL "study")
  set(uses_pattern "study::|coll_study[ \t)]")
else()
  message(FATAL_ERROR "runtime_apart: COMPONENT is '${COMPONENT}', not emulator or study")
endif()
set(COMPONENT_DIR "${SOURCE_DIR}/${COMPONENT}")
if(NOT IS_DIRECTORY "${COMPONENT_DIR}/src" OR NOT IS_DIRECTORY "${SOURCE_DIR}/libcoll/src")
  message(FATAL_ERROR "runtime_apart: no ${COMPONENT}/src or libcoll/src under '${SOURCE_DIR}'")
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
    if(target MATCHES "^${COMPONENT}/" OR EXISTS "${COMPONENT_DIR}/src/${target}" OR
       EXISTS "${COMPONENT_DIR}/include/${target}")
      string(APPEND violations "\n  ${file} includes \"${target}\", the ${COMPONENT}'s")
    endif()
  endforeach()
  # Calls into it, or a build that links it.
  file(STRINGS "${path}" uses REGEX "${uses_pattern}")
  foreach(line IN LISTS uses)
    string(STRIP "${line}" line)
    string(APPEND violations "\n  ${file} uses the ${COMPONENT}: ${line}")
  endforeach()
endforeach()
if(COMPONENT STREQUAL "emulator" AND EXISTS "${SOURCE_DIR}/libcoll/include/coll/cluster_clock.hpp")
  string(APPEND violations "\n  libcoll/include/coll/cluster_clock.hpp: the emulator's clock is "
         "public in emulator/include/emulator/cluster_clock.hpp, not libcoll's")
endif()
report_violations(runtime_apart "${SOURCE_DIR}/libcoll" "libcoll reaches into the ${COMPONENT}"
                  "of libcoll checked, none is the ${COMPONENT}'s")
