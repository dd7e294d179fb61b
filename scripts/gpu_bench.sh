#!/usr/bin/env bash
# On the GPU machine, the last command of ../shared/realmodel's recipe: append the last model
# piece, start llama-server (serve.sh waits for the CUDA build), then the seed goals' table
# and our own goals' table, and the workspaces as one archive, all under $OUT.
#   bash scripts/gpu_bench.sh LAST_PIECE SLOTS SECONDS_SEED SECONDS_OWN
# Carry .realmodel/c/LAST_PIECE and .realmodel/bin with it (LAST_PIECE "-": every piece
# was sent already; carry .realmodel/bin alone). The agent runs with the
# device's python3 (it has pytest); ruff comes from the wheels setup.sh installed.
set -u
piece=$1 slots=$2 seed=$3 own=$4
[ "$piece" = - ] || cat ".realmodel/c/$piece" >> /root/rm/model.gguf || exit 6
. .realmodel/bin/serve.sh "$slots" || exit 7
export PATH=/root/rm/site/bin:$PATH PYTHONPATH=/root/rm/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
B="--base-url $BASE_URL --parallel $slots --kills 2 --kill-window 2:15 --time-limit 300 --dir /tmp --keep"
python3 scripts/bench_real.py $B --goals hello,rps,mathx --runs 16 --budget "$seed" \
  --out "$OUT/seed.json" 2>&1 | tee "$OUT/seed.txt"
(cd /tmp && tar czf "$OUT/ws-seed.tgz" --exclude=__pycache__ --exclude=home localagent-real-*)
python3 scripts/bench_real.py $B --goals fixtest,wordcount,refactor,greet --runs 6 \
  --budget "$own" --out "$OUT/own.json" 2>&1 | tee "$OUT/own.txt"
cd /tmp && tar czf "$OUT/ws.tgz" --exclude=__pycache__ --exclude=home localagent-real-*
cat /root/rm/build.done
