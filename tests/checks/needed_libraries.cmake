# Fails when libcoll.so needs (DT_NEEDED) a GPU or RDMA library: CUDA and NCCL are opened at run
# time only where used, so that libcoll loads on machines without them. Run by ctest:
#   cmake -DLIBRARY=<libcoll.so> -DREADELF=<readelf> -P needed_libraries.cmake
execute_process(COMMAND "${READELF}" -d "${LIBRARY}" OUTPUT_VARIABLE dynamic
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "needed_libraries: '${READELF} -d ${LIBRARY}' failed: ${errors}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[([^]\n]*)\\]" entries "${dynamic}")
set(needed "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE ".*\\[([^]]*)\\]" "\\1" name "${entry}")
  list(APPEND needed "${name}")
endforeach()
# A libcoll with no NEEDED entries at all means the output was not understood, not a pass.
if(NOT needed MATCHES "libucp")
  message(FATAL_ERROR "needed_libraries: libucp not among the NEEDED entries [${needed}]")
endif()
set(forbidden "")
foreach(name IN LISTS needed)
  if(name MATCHES "nccl|cudart|libcuda|ibverbs|rdmacm")
    list(APPEND forbidden "${name}")
  endif()
endforeach()
if(forbidden)
  message(FATAL_ERROR "needed_libraries: libcoll.so must not need ${forbidden} (load them with dlopen)")
endif()
message(STATUS "needed_libraries: ${needed}")
