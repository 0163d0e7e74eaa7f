# Installing tapegrad into a scratch prefix and building a project against it with
# find_package(tapegrad), as a user would: shared by install_and_consume
# (tests/consumer/run_consumer_test.cmake) and docs_blocks (tests/docs/run_docs_test.cmake).

# Installs the build tree BINARY_DIR into PREFIX (emptied first).
function(tapegrad_install_into BINARY_DIR PREFIX)
  file(REMOVE_RECURSE ${PREFIX})
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${PREFIX}
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "install failed")
  endif()
endfunction()

# Configures and builds the project in SRC into BUILD against the package installed in PREFIX;
# WHAT names the project in the failure messages.
function(tapegrad_build_consumer SRC BUILD PREFIX WHAT)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BUILD}
                          -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "configuring ${WHAT} failed")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} -j2 RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building ${WHAT} failed (the compiler's messages above name the file and line)")
  endif()
endfunction()
