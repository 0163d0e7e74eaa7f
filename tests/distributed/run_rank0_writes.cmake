# Only rank 0 writes: a 2-process train_gpt job launched with a different --out per rank (mpirun's
# `A : B` form) must leave loss.csv, samples.txt and one whole checkpoint (holding rank 1's
# dropout generator) in rank 0's folder, no temporary file, and nothing at all at rank 1's path.
# A rank whose other options differ from rank 0's ends the job naming the difference.
# Needs TRAIN_GPT, MPIEXEC, PYTHON3, WORK.
file(REMOVE_RECURSE ${WORK})
set(common --data /usr/share/common-licenses/GPL-3 --preset tiny --steps 4 --eval-freq 2
           --eval-iter 1 --checkpoint-every 2 --context-length 16 --emb-dim 16 --n-heads 2
           --n-layers 1 --batch-size 2 --threads 1 --no-plot --sample-tokens 4)
execute_process(COMMAND ${MPIEXEC} --oversubscribe -np 1 ${TRAIN_GPT} ${common} --out ${WORK}/rank0
                        : -np 1 ${TRAIN_GPT} ${common} --out ${WORK}/rank1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the 2-process run failed (${rc})")
endif()
if(EXISTS ${WORK}/rank1)
  file(GLOB_RECURSE written ${WORK}/rank1/*)
  message(FATAL_ERROR "rank 1 wrote ${WORK}/rank1: ${written}")
endif()
file(GLOB files RELATIVE ${WORK}/rank0 ${WORK}/rank0/*)
list(SORT files)
if(NOT "${files}" STREQUAL "checkpoint.safetensors;loss.csv;samples.txt")
  message(FATAL_ERROR "rank 0's folder holds [${files}], not exactly the checkpoint, loss.csv "
                      "and samples.txt (a .tmp left over is a half-written file)")
endif()
# The checkpoint is whole (its size is the header's last offset) and holds both ranks' streams.
execute_process(COMMAND ${PYTHON3} -c "
import json, struct, sys
data = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', data[:8])[0]
header = json.loads(data[8:8 + n])
meta = header.pop('__metadata__')
end = max(e['data_offsets'][1] for e in header.values())
assert len(data) == 8 + n + end, (len(data), 8 + n + end)
for name in ('rng.default', 'rng.default.rank1', 'rng.data'):
    assert name in header, name
assert 'rng.default.rank2' not in header
assert meta['train_gpt.step'] == '4', meta['train_gpt.step']
print('checkpoint: whole,', len(header), 'tensors, rng entries', sorted(k for k in header if k.startswith('rng.')))
" ${WORK}/rank0/checkpoint.safetensors RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rank 0's checkpoint is not whole or lacks a rank's generator")
endif()

# Rank 1 with another --seed: the job ends at once, naming rank 1 and both configurations.
execute_process(COMMAND ${MPIEXEC} --oversubscribe -np 1 ${TRAIN_GPT} ${common} --out ${WORK}/bad
                        : -np 1 ${TRAIN_GPT} ${common} --seed 7 --out ${WORK}/bad
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
message("${out}${err}")
if(rc EQUAL 0 OR rc MATCHES "timeout")
  message(FATAL_ERROR "a job whose rank 1 has other options did not fail cleanly (${rc})")
endif()
if(NOT "${out}${err}" MATCHES "rank 1 of 2: error: tapegrad-train-gpt: the options of this process differ from rank 0's")
  message(FATAL_ERROR "the error does not name rank 1 and the differing options")
endif()
