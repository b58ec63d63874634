# ENABLE_CLANG_TIDY=ON runs clang-tidy (config in .clang-tidy) on every translation unit.
if(ENABLE_CLANG_TIDY)
  find_program(CLANG_TIDY_EXE NAMES clang-tidy REQUIRED)
  set(CMAKE_CXX_CLANG_TIDY ${CLANG_TIDY_EXE})
endif()
