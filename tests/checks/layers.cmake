# Fails when an include in libcoll/src points up a layer. Run by ctest:
#   cmake -DSOURCE_DIR=<libcoll/src> -P layers.cmake
# Layers, from the ground up; a folder may include its own layer and those below it. Files
# directly in src/ (the communicator, the C API) are the top layer. A public header ("coll/...")
# belongs to the layer that implements it (PUBLIC_* below), and is checked like any include.
set(LAYER_core 0)
set(LAYER_reduce 1)
set(LAYER_transport 1)
set(LAYER_bootstrap 1)
set(LAYER_topology 1)
set(LAYER_algorithms 2)
set(LAYER_collectives 2)
set(LAYER_model 2)
set(LAYER_schedule 3)
set(LAYER_top 4)
# Public headers by path: the first pattern that matches gives the folder that implements it.
set(PUBLIC_PATTERNS
  "^coll/model/" model
  "^coll/topology/" topology
  "^coll/(selector|algorithms)\\.hpp$" algorithms
  "^coll/exchange\\.hpp$" bootstrap
  "^coll/(comm|config|version)\\.hpp$|^coll/coll\\.h$" top
  "^coll/(error|env|clock|types|tuning|buffer_pool|shared_memory|half|bulk_copy)\\.hpp$" core)

include(${CMAKE_CURRENT_LIST_DIR}/report_violations.cmake)
if(NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "layers: SOURCE_DIR '${SOURCE_DIR}' is not a directory")
endif()
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.hpp" "${SOURCE_DIR}/*.cc"
     "${SOURCE_DIR}/*.h" "${SOURCE_DIR}/*.c")
set(violations "")
set(checked 0)
foreach(file IN LISTS files)
  if(file MATCHES "^([^/]+)/")
    set(folder "${CMAKE_MATCH_1}")
  else()
    set(folder top)
  endif()
  if(NOT DEFINED LAYER_${folder})
    string(APPEND violations "\n  ${file}: folder '${folder}' has no layer (add it to ${CMAKE_CURRENT_LIST_FILE})")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    math(EXPR checked "${checked} + 1")
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
    if(target MATCHES "^coll/")
      set(target_folder "")
      set(patterns ${PUBLIC_PATTERNS})
      while(patterns AND NOT target_folder)
        list(POP_FRONT patterns pattern owner)
        if(target MATCHES "${pattern}")
          set(target_folder "${owner}")
        endif()
      endwhile()
      if(NOT target_folder)
        string(APPEND violations "\n  ${file}: public header \"${target}\" has no layer (add it to PUBLIC_PATTERNS)")
        continue()
      endif()
    elseif(target MATCHES "^([^/]+)/")
      set(target_folder "${CMAKE_MATCH_1}")
    elseif(folder STREQUAL "top")
      set(target_folder top)  # a neighbour of comm.cc
    else()
      string(APPEND violations "\n  ${file}: \"${target}\" (includes are written from src/)")
      continue()
    endif()
    if(NOT DEFINED LAYER_${target_folder})
      string(APPEND violations "\n  ${file}: \"${target}\" is in no known layer")
    elseif(LAYER_${target_folder} GREATER LAYER_${folder})
      string(APPEND violations
             "\n  ${file} (${folder}, layer ${LAYER_${folder}}) includes \"${target}\" "
             "(${target_folder}, layer ${LAYER_${target_folder}})")
    endif()
  endforeach()
endforeach()
report_violations(layers "${SOURCE_DIR}" "includes that point up" "checked, none points up")
