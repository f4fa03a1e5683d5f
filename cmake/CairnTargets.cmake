# Shared target settings and the cairn_layer() helper.

# Warnings and sanitizers apply to every Cairn target (not to third-party code).
function(cairn_target_defaults target)
  # -ffp-contract=off: GCC would otherwise fuse a*b+c into FMAs wherever it
  # likes, so the same formula could round differently in a vectorised body and
  # its scalar tail (or across targets). Kernels write their FMAs explicitly.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter -ffp-contract=off)
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O3)
  endif()
  if(CAIRN_BUILD_FUZZ)
    # Coverage instrumentation for libFuzzer in every library the fuzzers link.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  endif()
  if(CAIRN_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# cairn_layer(NAME DEPS dep1 dep2 ...)
# Builds src/NAME/*.cc into library cairn_NAME (an INTERFACE library while the
# layer has no sources yet). Headers are included as "NAME/file.h" from src/.
# DEPS name only lower layers or external targets; CMake then enforces the
# one-way dependency direction at link time.
function(cairn_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/*/*.cc)
  if(sources)
    add_library(cairn_${name} STATIC ${sources})
    target_include_directories(cairn_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(cairn_${name} PUBLIC ${ARG_DEPS})
    cairn_target_defaults(cairn_${name})
  else()
    add_library(cairn_${name} INTERFACE)
    target_include_directories(cairn_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(cairn_${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# cairn_test_suite(LAYER DEPS ...): one gtest executable per tests/LAYER folder.
function(cairn_test_suite layer)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${layer}/*_test.cc)
  if(NOT sources)
    return()
  endif()
  add_executable(${layer}_tests ${sources})
  target_link_libraries(${layer}_tests PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${layer}_tests PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${layer}_tests PRIVATE
    CAIRN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CAIRN_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  cairn_target_defaults(${layer}_tests)
  gtest_discover_tests(${layer}_tests DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${layer})
endfunction()
