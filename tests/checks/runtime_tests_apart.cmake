# Fails when a test of the runtime (tests/unit, tests/integration, tests/emulator) includes a
# tool's or the study's code (a file of bench/, topology/ or study/include/, or the tools library's coll/tools/),
# which would tie the library's tests to collbench_lib; only tests/study and tests/tools may. Run by ctest:
#   cmake -DSOURCE_DIR=<root> -P runtime_tests_apart.cmake
include(${CMAKE_CURRENT_LIST_DIR}/report_violations.cmake)
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/tests/unit/*" "${SOURCE_DIR}/tests/integration/*" "${SOURCE_DIR}/tests/emulator/*")
set(tool_dirs bench topology study/include)
set(violations "")
set(checked 0)
foreach(file IN LISTS files)
  file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    math(EXPR checked "${checked} + 1")
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" header "${line}")
    if(header MATCHES "^coll/tools/")
      string(APPEND violations "\n  ${file}: \"${header}\" is the tools library's")
    endif()
    foreach(dir IN LISTS tool_dirs)
      if(EXISTS "${SOURCE_DIR}/${dir}/${header}")
        string(APPEND violations "\n  ${file}: \"${header}\" is ${dir}/${header}")
      endif()
    endforeach()
  endforeach()
endforeach()
report_violations(runtime_tests_apart "${SOURCE_DIR}/tests"
                  "tests of the runtime include tool or study code (move the test to tests/tools or tests/study)"
                  "of the runtime's tests checked, none of tool or study code")
