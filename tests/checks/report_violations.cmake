# The end every structure check shares: it fails when it found no include to check (it looked in
# the wrong place) or found violations (the caller's `violations`, one "\n  ..." line each), and
# otherwise says how many includes (the caller's `checked`) it checked.
#   report_violations(<check> <where it looked> <what the violations are> <what passing means>)
function(report_violations check where failure success)
  if(checked EQUAL 0)
    message(FATAL_ERROR "${check}: no includes found under ${where}")
  endif()
  if(violations)
    message(FATAL_ERROR "${check}: ${failure}:${violations}")
  endif()
  message(STATUS "${check}: ${checked} includes ${success}")
endfunction()
