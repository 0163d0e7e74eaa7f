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
tapegrad_require(PKG_CONFIG_FOUND pkg-config "pkg-config (to find Graphviz)")
pkg_check_modules(GVC QUIET IMPORTED_TARGET libgvc)
tapegrad_require(GVC_FOUND libgraphviz-dev "Graphviz's libgvc")
find_program(TAPEGRAD_DOT_PROGRAM dot)
tapegrad_require(TAPEGRAD_DOT_PROGRAM graphviz "Graphviz's dot program")
add_library(tapegrad_graphviz INTERFACE)
target_link_libraries(tapegrad_graphviz INTERFACE Boost::boost PkgConfig::GVC)

if(TAPEGRAD_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  tapegrad_require(Catch2_FOUND catch2 "Catch2 v2")
endif()

if(TAPEGRAD_BUILD_EXAMPLES)
  # The examples' and tools' command lines (tools/cli.h); header-only.
  find_package(CLI11 2 QUIET CONFIG)
  tapegrad_require(CLI11_FOUND libcli11-dev "CLI11 (command-line parsing for the examples and tools)")
  add_library(tapegrad_cli INTERFACE)
  target_link_libraries(tapegrad_cli INTERFACE CLI11::CLI11)
endif()
