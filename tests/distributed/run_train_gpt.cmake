# train_gpt as a data-parallel job: `mpirun -np 2 train_gpt --batch-size 2` must follow one process
# with --batch-size 4 (the same global batch; dropout off) within float32 rounding, only rank 0
# may print and write, and the checkpoint must be there. Needs TRAIN_GPT, MPIEXEC, PYTHON3, WORK.
file(REMOVE_RECURSE ${WORK})
set(common --data /usr/share/common-licenses/GPL-3 --preset tiny --steps 6 --eval-freq 2 --eval-iter 2 --drop-rate 0 --context-length 16
           --emb-dim 16 --n-heads 2 --n-layers 1 --threads 1 --no-plot)
execute_process(COMMAND ${TRAIN_GPT} ${common} --batch-size 4 --out ${WORK}/one
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the single-process run failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${MPIEXEC} -np 2 --oversubscribe ${TRAIN_GPT} ${common} --batch-size 2
                        --out ${WORK}/two
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the 2-process run failed (${rc})")
endif()
string(REGEX MATCHALL "tapegrad-train-gpt: preset" heads "${out}")
list(LENGTH heads n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "the run's header was printed ${n} times: only rank 0 prints")
endif()
if(NOT out MATCHES "2 processes \\(global batch 4\\)")
  message(FATAL_ERROR "the header does not say 2 processes with a global batch of 4")
endif()
if(NOT EXISTS ${WORK}/two/checkpoint.safetensors)
  message(FATAL_ERROR "no checkpoint from the 2-process run")
endif()
execute_process(COMMAND ${PYTHON3} -c "
import csv, sys
one = list(csv.DictReader(open(sys.argv[1])))
two = list(csv.DictReader(open(sys.argv[2])))
assert [r['step'] for r in one] == [r['step'] for r in two], (one, two)
assert [r['tokens_seen'] for r in one] == [r['tokens_seen'] for r in two], (one, two)
worst = max(abs(float(a[k]) - float(b[k])) / abs(float(a[k]))
            for a, b in zip(one, two) for k in ('train_loss', 'val_loss'))
print('evaluations:', len(one), 'worst relative loss difference:', worst)
assert worst <= 1e-5, worst
" ${WORK}/one/loss.csv ${WORK}/two/loss.csv RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the 2-process losses differ from one process on the same global batch")
endif()
