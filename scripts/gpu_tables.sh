#!/usr/bin/env bash
# On the GPU machine, the last command when little device time is left: append the last
# model piece, start llama-server with a slot for every run, and run the seed goals' table
# (16 runs each) and our own goals' table (6 runs each) at the same time, two kills per
# run; then the workspaces as archives, all under $OUT.
#   bash scripts/gpu_tables.sh LAST_PIECE SECONDS_PER_RUN
# Carry .realmodel/c/LAST_PIECE and .realmodel/bin ("-": every piece was sent already).
# The engine either was built by setup.sh or came prebuilt (.realmodel/llb/llb.tgz
# unpacked into its build folder, with build.done written: scripts/README.md).
# Both tables share the engine, so its /metrics reuse is theirs together.
set -u
piece=$1 limit=$2
[ "$piece" = - ] || bash .realmodel/bin/chunk.sh "$piece" >/dev/null || exit 6
. .realmodel/bin/serve.sh 72 || exit 7
export PATH=/root/rm/site/bin:$PATH PYTHONPATH=/root/rm/site:$PWD PYTHONUNBUFFERED=1
B="--base-url $BASE_URL --kills 2 --kill-window 2:15 --time-limit $limit --keep"
mkdir -p /tmp/seed /tmp/own
python3 scripts/bench_real.py $B --parallel 24 --dir /tmp/own \
  --goals fixtest,wordcount,refactor,greet --runs 6 --out "$OUT/own.json" > "$OUT/own.txt" 2>&1 &
own=$!
python3 scripts/bench_real.py $B --parallel 48 --dir /tmp/seed --goals hello,rps,mathx \
  --runs 16 --out "$OUT/seed.json" > "$OUT/seed.txt" 2>&1
wait "$own"
grep -v '^\[' "$OUT/own.txt"; grep -v '^\[' "$OUT/seed.txt"
for d in own seed; do
  (cd /tmp/$d && tar czf "$OUT/ws-$d.tgz" --exclude=__pycache__ --exclude=home .)
done
