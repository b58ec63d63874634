# draco_warnings(<target>): the project's warning set; -Werror when DRACO_WERROR is on.
function(draco_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wno-deprecated-declarations)
  if(DRACO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
