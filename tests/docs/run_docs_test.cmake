# docs_blocks: installs tapegrad into a scratch prefix, builds every C++ block of README.md and
# docs/*.md against it (tests/docs/CMakeLists.txt, one program per block) and runs each, runs the
# shell blocks that call an installed program, and fails on a stale path (tests/docs/docs_blocks.py).
include(${SOURCE_DIR}/tests/consumer/consumer_project.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${PYTHON3} ${SOURCE_DIR}/tests/docs/docs_blocks.py extract ${SOURCE_DIR}
                        ${WORK_DIR}/src RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the docs name paths that do not exist (listed above)")
endif()
file(COPY ${SOURCE_DIR}/tests/docs/CMakeLists.txt DESTINATION ${WORK_DIR}/src)
tapegrad_install_into(${BINARY_DIR} ${WORK_DIR}/prefix)
# docs/ops.md sends its readers to the installed copy of examples/custom_op.cpp.
if(NOT EXISTS ${WORK_DIR}/prefix/share/doc/tapegrad/examples/custom_op.cpp)
  message(FATAL_ERROR "the package does not install examples/custom_op.cpp into "
                      "share/doc/tapegrad/examples/, where docs/ops.md says it is")
endif()
tapegrad_build_consumer(${WORK_DIR}/src ${WORK_DIR}/build ${WORK_DIR}/prefix "the docs' C++ blocks")
execute_process(COMMAND ${PYTHON3} ${SOURCE_DIR}/tests/docs/docs_blocks.py run ${SOURCE_DIR}
                        ${WORK_DIR} ${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "a block of the docs failed (FAILED lines above)")
endif()
