# The tools (collbench, collrun: bench/; colltopo: topology/) and the study (study/) build on
# libcoll's public headers (coll/...), the link emulator's (emulator/...), the study's
# (study/...), the shared reference data's (support/) and their own files only, and those headers
# (libcoll's, the tools library's, the emulator's, the study's, support/'s) include only each
# other. Fails naming every quoted include that is neither, so a
# tool or public header that reaches into libcoll/src again is caught.
# Run: cmake -DSOURCE_DIR=<root> -P <this>.
cmake_minimum_required(VERSION 3.25)

# Every tool's sources, in sub-folders too (bench/memory_bound, bench/peers, ...).
file(GLOB_RECURSE CHECKED_FILES RELATIVE ${SOURCE_DIR}
  ${SOURCE_DIR}/bench/*.cc ${SOURCE_DIR}/bench/*.hpp
  ${SOURCE_DIR}/topology/*.cc ${SOURCE_DIR}/topology/*.hpp ${SOURCE_DIR}/study/src/*.cc)
file(GLOB_RECURSE PUBLIC_HEADERS RELATIVE ${SOURCE_DIR}
  ${SOURCE_DIR}/libcoll/include/*.h ${SOURCE_DIR}/libcoll/include/*.hpp
  ${SOURCE_DIR}/libcoll/include/*.hpp.in ${SOURCE_DIR}/libcoll/tools/include/*.hpp
  ${SOURCE_DIR}/emulator/include/*.hpp ${SOURCE_DIR}/study/include/*.hpp ${SOURCE_DIR}/support/*.hpp)
list(APPEND CHECKED_FILES ${PUBLIC_HEADERS})
set(PUBLIC_DIRS ${SOURCE_DIR}/libcoll/include ${SOURCE_DIR}/libcoll/tools/include
  ${SOURCE_DIR}/emulator/include ${SOURCE_DIR}/study/include ${SOURCE_DIR}/support)
set(PRIVATE_INCLUDES "")
foreach(file ${CHECKED_FILES})
  get_filename_component(dir ${file} DIRECTORY)
  string(REGEX REPLACE "/.*" "" tool_root "${dir}")  # bench, topology or study: its own headers
  file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
    set(public FALSE)
    foreach(public_dir ${PUBLIC_DIRS})
      if(EXISTS ${public_dir}/${header} OR header STREQUAL "coll/version.hpp")
        set(public TRUE)
      endif()
    endforeach()
    if(public OR (NOT dir MATCHES "^libcoll/" AND (EXISTS ${SOURCE_DIR}/${dir}/${header} OR
                                                    EXISTS ${SOURCE_DIR}/${tool_root}/${header})))
      continue()
    endif()
    list(APPEND PRIVATE_INCLUDES "${file}: ${header}")
  endforeach()
endforeach()

list(LENGTH CHECKED_FILES count)
if(count EQUAL 0)
  message(FATAL_ERROR "no tool sources or public headers under ${SOURCE_DIR}")
endif()
if(PRIVATE_INCLUDES)
  list(JOIN PRIVATE_INCLUDES "\n  " text)
  message(FATAL_ERROR "tools include private libcoll headers (use a public coll/ header):\n  ${text}")
endif()
message(STATUS "${count} tool files and public headers include only public headers")
