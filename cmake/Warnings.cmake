# draco_warnings(<target>): the project's warning set; -Werror when DRACO_WERROR is on.
function(draco_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wno-deprecated-declarations)
  # GCC 12 (Debian 12's) at -O3, the Release build the image uses, reports -Wrestrict inside
  # libstdc++'s std::string for `"literal" + str` (GCC bug 105329, a false positive fixed in GCC
  # 13): 13 translation units, none of them with an overlapping copy of ours.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(DRACO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
