# draco_fuzzer(NAME <n> SOURCES <files> DEPS <targets> CORPUS <dir>): a libFuzzer target, built only
# with -DENABLE_FUZZING=ON and clang. `<n>_run` runs it for DRACO_FUZZ_SECONDS on its corpus.
set(DRACO_FUZZ_SECONDS 600 CACHE STRING "Seconds per fuzz_<target>_run")
if(ENABLE_FUZZING AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "ENABLE_FUZZING needs clang: configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
function(draco_fuzzer)
  cmake_parse_arguments(F "" "NAME;CORPUS" "SOURCES;DEPS" ${ARGN})
  if(NOT ENABLE_FUZZING)
    return()
  endif()
  add_executable(${F_NAME} ${F_SOURCES})
  target_link_libraries(${F_NAME} PRIVATE ${F_DEPS})
  target_compile_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  add_custom_target(${F_NAME}_run
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/${F_NAME}_corpus
    COMMAND $<TARGET_FILE:${F_NAME}> -max_total_time=${DRACO_FUZZ_SECONDS} -rss_limit_mb=2048
            -timeout=10 ${CMAKE_CURRENT_BINARY_DIR}/${F_NAME}_corpus ${F_CORPUS}
    DEPENDS ${F_NAME} USES_TERMINAL)
endfunction()
