# Finds tapegrad's dependencies; a missing one stops CMake naming the Debian package to install.
function(tapegrad_require found package what)
  if(NOT ${found})
    message(FATAL_ERROR "tapegrad needs ${what}: install it with `apt-get install ${package}` "
                        "(or run `bash tools/dev.sh test`, which installs everything).")
  endif()
endfunction()

find_package(Eigen3 3.3 QUIET NO_MODULE)
tapegrad_require(Eigen3_FOUND libeigen3-dev "Eigen 3")

find_package(Boost 1.74 QUIET)
if(Boost_FOUND AND NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/graph/adjacency_list.hpp")
  set(Boost_FOUND FALSE)
endif()
tapegrad_require(Boost_FOUND libboost-graph-dev "Boost.Graph")

find_package(PkgConfig QUIET)
tapegrad_require(PKG_CONFIG_FOUND pkg-config "pkg-config (to find the libraries below)")
# Graphviz's libgvc renders DOT in-process (viz/dot.h's render). AUTO uses it when found; ON
# stops here when it is not; OFF (or not found: Debian has no arm64 libgvc beside the amd64 one)
# builds render() as a function that throws Error saying so.
set(TAPEGRAD_GRAPHVIZ AUTO CACHE STRING "Render DOT drawings with Graphviz's libgvc: AUTO, ON or OFF")
set_property(CACHE TAPEGRAD_GRAPHVIZ PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${TAPEGRAD_GRAPHVIZ}" _tapegrad_graphviz)
if(NOT _tapegrad_graphviz MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "TAPEGRAD_GRAPHVIZ=${TAPEGRAD_GRAPHVIZ}: expected AUTO, ON or OFF")
endif()
set(TAPEGRAD_HAVE_GRAPHVIZ OFF)
if(_tapegrad_graphviz STREQUAL "OFF")
  message(STATUS "tapegrad: TAPEGRAD_GRAPHVIZ=OFF: no in-process rendering (render() throws)")
else()
  pkg_check_modules(GVC QUIET IMPORTED_TARGET libgvc)
  if(GVC_FOUND)
    set(TAPEGRAD_HAVE_GRAPHVIZ ON)
  elseif(_tapegrad_graphviz STREQUAL "ON")
    message(FATAL_ERROR "TAPEGRAD_GRAPHVIZ=ON but pkg-config finds no Graphviz libgvc (libgvc.pc): "
                        "install it with `apt-get install libgraphviz-dev`, or configure with "
                        "-DTAPEGRAD_GRAPHVIZ=AUTO or OFF.")
  else()
    message(STATUS "tapegrad: Graphviz's libgvc not found (apt-get install libgraphviz-dev): no "
                   "in-process rendering (render() throws Error saying so)")
  endif()
endif()
# The tests check every DOT text with Graphviz's dot program (a program of the building machine,
# also in a cross build).
if(TAPEGRAD_BUILD_TESTS)
  find_program(TAPEGRAD_DOT_PROGRAM dot)
  tapegrad_require(TAPEGRAD_DOT_PROGRAM graphviz "Graphviz's dot program (for the tests)")
endif()
# The tokenizers (text/): PCRE2 runs their pre-tokenizing regex (Unicode classes, lookahead),
# nlohmann's JSON (header-only, used inside text/ only) reads the vocabulary files, and utf8proc
# gives Qwen3's tokenizer its NFC normalisation.
pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
tapegrad_require(PCRE2_FOUND libpcre2-dev "PCRE2 (the tokenizers' regex)")
find_package(nlohmann_json 3.10 QUIET)
tapegrad_require(nlohmann_json_FOUND nlohmann-json3-dev "nlohmann's JSON library (the tokenizers' files)")
pkg_check_modules(UTF8PROC QUIET IMPORTED_TARGET libutf8proc)
tapegrad_require(UTF8PROC_FOUND libutf8proc-dev "utf8proc (Unicode normalisation for Qwen3's tokenizer)")
# SLEEF: the vectorised exp/tanh/log of kernels/vmath/vmath.cpp (the functions torch's CPU kernels
# call). Debian ships a pkg-config file and no CMake package.
pkg_check_modules(SLEEF QUIET IMPORTED_TARGET sleef)
tapegrad_require(SLEEF_FOUND libsleef-dev "SLEEF (vectorised math functions)")
add_library(tapegrad_graphviz INTERFACE)
target_link_libraries(tapegrad_graphviz INTERFACE Boost::boost)
if(TAPEGRAD_HAVE_GRAPHVIZ)
  target_link_libraries(tapegrad_graphviz INTERFACE PkgConfig::GVC)
endif()

if(TAPEGRAD_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  tapegrad_require(Catch2_FOUND catch2 "Catch2 v2")
endif()

# OpenBLAS, the default GEMM backend when it is found (kernels/gemm/gemm.h): Debian's
# libopenblas-dev, whose openblas.pc points at the flavour update-alternatives selects (the
# pthread one, libopenblas0-pthread, is what tapegrad is tested with). AUTO links it when found;
# ON stops here when it is not; OFF builds the Eigen kernel only.
set(TAPEGRAD_OPENBLAS AUTO CACHE STRING "Link OpenBLAS as the default GEMM backend: AUTO, ON or OFF")
set_property(CACHE TAPEGRAD_OPENBLAS PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${TAPEGRAD_OPENBLAS}" _tapegrad_openblas)
if(NOT _tapegrad_openblas MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "TAPEGRAD_OPENBLAS=${TAPEGRAD_OPENBLAS}: expected AUTO, ON or OFF")
endif()
set(TAPEGRAD_HAVE_OPENBLAS OFF)
if(_tapegrad_openblas STREQUAL "OFF")
  message(STATUS "tapegrad: TAPEGRAD_OPENBLAS=OFF: GEMM on Eigen's kernel only")
else()
  pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
  if(OPENBLAS_FOUND)
    set(TAPEGRAD_HAVE_OPENBLAS ON)
    message(STATUS "tapegrad: GEMM on OpenBLAS ${OPENBLAS_VERSION} (${OPENBLAS_LINK_LIBRARIES}) "
                   "by default, Eigen's kernel on request")
  elseif(_tapegrad_openblas STREQUAL "ON")
    message(FATAL_ERROR "TAPEGRAD_OPENBLAS=ON but pkg-config finds no OpenBLAS (openblas.pc): "
                        "install it with `apt-get install libopenblas-dev libopenblas0-pthread`, "
                        "or configure with -DTAPEGRAD_OPENBLAS=AUTO or OFF.")
  else()
    message(STATUS "tapegrad: OpenBLAS not found (apt-get install libopenblas-dev): GEMM on "
                   "Eigen's kernel only")
  endif()
endif()

# oneDNN, the engine of the bf16 products (kernels/gemm/matmul_precision.h) where it is found:
# Debian's libdnnl-dev (OpenMP runtime; tapegrad sets each calling thread's OpenMP team to one
# thread, so it links libgomp too). Found by its library and header rather than its CMake
# package, which asks for OpenCL. AUTO links it when found; ON stops here when it is not; OFF
# runs bf16 products on rounded operands through the float32 kernel only.
set(TAPEGRAD_DNNL AUTO CACHE STRING "Link oneDNN for the bf16 products: AUTO, ON or OFF")
set_property(CACHE TAPEGRAD_DNNL PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${TAPEGRAD_DNNL}" _tapegrad_dnnl)
if(NOT _tapegrad_dnnl MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "TAPEGRAD_DNNL=${TAPEGRAD_DNNL}: expected AUTO, ON or OFF")
endif()
set(TAPEGRAD_HAVE_DNNL OFF)
if(NOT _tapegrad_dnnl STREQUAL "OFF")
  find_library(TAPEGRAD_DNNL_LIBRARY dnnl)
  find_path(TAPEGRAD_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_package(OpenMP QUIET COMPONENTS CXX)
  if(TAPEGRAD_DNNL_LIBRARY AND TAPEGRAD_DNNL_INCLUDE_DIR AND OpenMP_CXX_FOUND)
    set(TAPEGRAD_HAVE_DNNL ON)
    message(STATUS "tapegrad: bf16 products on oneDNN (${TAPEGRAD_DNNL_LIBRARY})")
  elseif(_tapegrad_dnnl STREQUAL "ON")
    message(FATAL_ERROR "TAPEGRAD_DNNL=ON but oneDNN (libdnnl.so, oneapi/dnnl/dnnl.hpp) or "
                        "OpenMP is not found: install it with `apt-get install libdnnl-dev`, or "
                        "configure with -DTAPEGRAD_DNNL=AUTO or OFF.")
  else()
    message(STATUS "tapegrad: oneDNN not found (apt-get install libdnnl-dev): bf16 products on "
                   "the float32 kernel with rounded operands")
  endif()
endif()

if(TAPEGRAD_BUILD_EXAMPLES)
  # The examples' and tools' command lines (cli/cli.h); header-only.
  find_package(CLI11 2 QUIET CONFIG)
  tapegrad_require(CLI11_FOUND libcli11-dev "CLI11 (command-line parsing for the examples and tools)")
  add_library(tapegrad_cli INTERFACE)
  target_link_libraries(tapegrad_cli INTERFACE CLI11::CLI11)
endif()
