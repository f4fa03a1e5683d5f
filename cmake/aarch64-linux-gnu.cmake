# CMake toolchain file: cross build for aarch64 Linux with Debian's
# g++-aarch64-linux-gnu and the arm64 multiarch packages of the libraries
# (dpkg --add-architecture arm64; libhwy-dev:arm64 ...: scripts/install-deps.sh).
# Binaries run through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR), so
# gtest_discover_tests and ctest work on an x86-64 host. Used with
# -DCAIRN_KERNELS_ONLY=ON by scripts/check-arm-tests.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Only the arm64 multiarch .pc files (the host's would name x86-64 libraries).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# Libraries and CMake package files: the multiarch folders first.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
if(NOT DEFINED CAIRN_QEMU_CPU)
  set(CAIRN_QEMU_CPU max)
endif()
find_program(CAIRN_QEMU_AARCH64 qemu-aarch64)
if(CAIRN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CAIRN_QEMU_AARCH64} -cpu ${CAIRN_QEMU_CPU})
endif()
