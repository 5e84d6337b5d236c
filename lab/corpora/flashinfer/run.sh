#!/bin/bash
# Checks the FlashInfer cubins in batches of 100 (shuffled order), one JSON report a batch.
cd /work/flashinfer/run
B=./gridcheck-check-v1
CACHE=/work/wt/check/target/check-cache
mkdir -p out
split -l 100 -d -a 3 list.txt batch-
for b in batch-*; do
  [ -f out/$b.done ] && continue
  s=$(date +%s.%N)
  $B --format json --cache $CACHE --jobs 2 $(cat $b) > out/$b.json 2> out/$b.err
  e=$(date +%s.%N)
  echo "$b $(echo "$e - $s" | bc)" >> times.txt
  touch out/$b.done
done
echo finished >> times.txt
