# Runs the failing job (FAULT_EXE under MPIEXEC with 2 ranks) and requires: a non-zero exit,
# rank 1's message, and an end within 60 seconds (a hang would hit the timeout).
execute_process(COMMAND ${MPIEXEC} -np 2 --oversubscribe ${FAULT_EXE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the job whose rank 1 failed exited 0")
endif()
if(rc MATCHES "timeout")
  message(FATAL_ERROR "the job hung: ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "rank 1 of 2: error: cannot open data file /nonexistent/corpus.txt")
  message(FATAL_ERROR "rank 1's message is missing from the job's output")
endif()
