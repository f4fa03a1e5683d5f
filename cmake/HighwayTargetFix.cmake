# Makes Highway's AVX3_DL target compile only instructions its CPU check requires.
#
# Highway 1.0.3 (Debian 12's libhwy-dev) lists "avxvnni" in the AVX3_DL target
# attribute string (hwy/ops/set_macros-inl.h). That is AVX-VNNI, the VEX-encoded
# 256-bit VNNI of Alder Lake / Sapphire Rapids / Zen 5, not AVX512-VNNI. With it
# enabled GCC encodes every 256-bit vpdpbusd as VEX ("{vex} vpdpbusd"), but the
# AVX3_DL runtime check requires AVX512-VNNI only, so Zen 4, Ice Lake, Tiger Lake
# and Rocket Lake (AVX512-VNNI without AVX-VNNI) dispatch to AVX3_DL and die with
# SIGILL. Later Highway releases list "avx512vnni" there instead.
#
# The attribute string is a macro that each target's pass of foreach_target.h
# redefines and Highway's own ops headers expand, so no pragma in Cairn's code can
# take "avxvnni" back without breaking inlining of Highway's ops (GCC refuses to
# inline a callee whose ISA set is not a subset of the caller's). Instead this
# writes a corrected copy of that one header into the build tree, with
# "avxvnni" replaced by "avx512vnni", and puts its folder before the system
# include path of every target that links cairn_kernels. Nothing is written when
# the installed Highway is already correct. tests/kernels/isa_audit.py proves the
# result on the built binary.
#
# cairn_fix_highway_targets(TARGET) adds the include folder to TARGET (PUBLIC).
function(cairn_fix_highway_targets target)
  find_file(CAIRN_HWY_SET_MACROS hwy/ops/set_macros-inl.h
            HINTS ${HWY_INCLUDEDIR} ${HWY_INCLUDE_DIRS} NO_CACHE)
  if(NOT CAIRN_HWY_SET_MACROS)
    message(FATAL_ERROR "Highway header hwy/ops/set_macros-inl.h not found")
  endif()
  file(READ "${CAIRN_HWY_SET_MACROS}" text)
  string(FIND "${text}" ",avxvnni," bad_token)
  if(bad_token EQUAL -1)
    message(STATUS "Highway AVX3_DL target string: no AVX-VNNI (VEX), no fix needed")
    return()
  endif()
  string(REPLACE ",avxvnni," ",avx512vnni," fixed "${text}")
  set(overlay "${CMAKE_BINARY_DIR}/highway-target-fix")
  set(out "${overlay}/hwy/ops/set_macros-inl.h")
  # Rewrite only when the content changes, so builds stay incremental.
  if(EXISTS "${out}")
    file(READ "${out}" old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL fixed)
    file(WRITE "${out}" "${fixed}")
  endif()
  # Reconfigure when the installed header changes (a Highway upgrade).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CAIRN_HWY_SET_MACROS}")
  message(STATUS "Highway AVX3_DL target string: avxvnni -> avx512vnni (${out})")
  target_include_directories(${target} BEFORE PUBLIC "${overlay}")
endfunction()
