# Cross-compiling tapegrad for arm64 (aarch64) Linux on a Debian amd64 machine: Debian's
# g++-aarch64-linux-gnu, the arm64 dependencies installed through multiarch (dpkg
# --add-architecture arm64; libraries in /usr/lib/aarch64-linux-gnu, headers shared in
# /usr/include), and qemu-user to run what is built (ctest, Catch2's test discovery). Used by
# `bash tools/dev.sh arm64`; docs/building.md, section "arm64".
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: find_library and find_package search <prefix>/lib/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The cross C library's own files live under /usr/aarch64-linux-gnu, the arm64 packages under /:
# search both for libraries, headers and packages, the build machine only for programs.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the arm64 packages' .pc files and the architecture-independent ones only,
# never the build machine's (/usr/lib/x86_64-linux-gnu/pkgconfig).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# Built programs run under qemu-user with the arm64 C library of multiarch (libc6:arm64, which the
# arm64 packages above depend on): its loader, /lib/ld-linux-aarch64.so.1, and libraries. Not the
# cross toolchain's copy in /usr/aarch64-linux-gnu (-L /usr/aarch64-linux-gnu): its loader with
# multiarch's libc.so.6, a different build of glibc, hangs in the first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
