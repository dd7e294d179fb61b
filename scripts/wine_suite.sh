#!/usr/bin/env bash
# The test suite on the official Windows x64 CPython 3.11 under Wine, one file at a time,
# with a table of what passed, failed and was skipped in each file.
#
#   bash scripts/wine_suite.sh                          # every tests/test_*.py
#   FILES="tests/test_tools.py tests/test_process.py" bash scripts/wine_suite.sh
#   FILES=tests/test_daemon.py K="stale_lock or resume_all" bash scripts/wine_suite.sh   # -k
#
# The Windows CPython and its Wine prefix come from ../shared/tools/windows/wine-python.sh
# (Debian's wine and PyPI only); it runs once, when $WORK has no prefix yet (several minutes).
# The suite runs the working tree as it is (committed or not), copied to $WORK/suite-src and
# put first on PYTHONPATH, so no reinstall is needed between runs.
#
# Wine stand-ins, as on a Windows account without the symlink privilege: os.symlink raises
# WinError 1314 (Wine 8 reports success and creates nothing, so tests would test nothing).
# Each test has a time limit (pytest-timeout, TIMEOUT seconds) so a Wine hang names its test.
# Results: $WORK/suite-results/<file>.txt and the table at the end ($WORK/suite-results/table);
# the exit status is 1 if any file failed. Two runs at once need their own SRC= and RESULTS=
# (and ARGS='--basetemp=C:\other-tmp'); REPO= runs another checkout (a clean clone).
# Wine quirk: once Wine's services have run for a while its `schtasks` stub can hang, and
# the `doctor` tests time out; `wineserver -k` (on a prefix no one else is using) clears it.
set -uo pipefail

REPO=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
WORK=${WORK:-/tmp/winla-work}
SETUP=${SETUP:-$REPO/../shared/tools/windows/wine-python.sh}
TIMEOUT=${TIMEOUT:-180}
export WINEPREFIX=${WINEPREFIX:-$WORK/wineprefix}
export WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
PY='C:\py311\python.exe'
PYDIR="$WINEPREFIX/drive_c/py311"

if [ ! -f "$PYDIR/python.exe" ]; then
  echo "== no Windows CPython in $WINEPREFIX: setting it up with $SETUP"
  WORK="$WORK" TESTS="tests/test_settings.py" bash "$SETUP" "$REPO" || exit 1
fi

# A wineserver (and Wine's services) started inside a pipeline keep that pipe open, and the
# `cat` below waiting, for as long as they live: start them first, outside any pipe.
wineserver -p 120 </dev/null >/dev/null 2>&1 || true
wine cmd /c exit </dev/null >/dev/null 2>&1 || true

# Python under Wine dies when its output is a file the shell opened: pipe it, stdin from null.
winrun() { wine "$@" </dev/null 2>&1 | cat; return "${PIPESTATUS[0]}"; }
unset PIP_FIND_LINKS PIP_CERT PIP_DEFAULT_TIMEOUT PIP_INDEX_URL PIP_EXTRA_INDEX_URL
unset PYTHONDONTWRITEBYTECODE VIRTUAL_ENV
export PIP_CONFIG_FILE=NUL PIP_DISABLE_PIP_VERSION_CHECK=1
winpath() { echo "Z:$(echo "$1" | tr / '\\')"; }

if ! ls "$PYDIR"/Lib/site-packages | grep -q '^pytest_timeout'; then
  mkdir -p "$WORK/winwheels"
  pip download -q --no-deps --only-binary=:all: -d "$WORK/winwheels" pytest-timeout
  PIP_NO_INDEX=1 winrun "$PY" -m pip install -q --find-links "$(winpath "$WORK/winwheels")" \
      pytest-timeout
fi

# Dependencies added since the prefix was made (the suite runs the source tree, not an
# install): fetched as win_amd64 wheels and installed offline.
for dep in regex; do
  if ! ls "$PYDIR"/Lib/site-packages | grep -qi "^${dep}-"; then
    pip download -q --only-binary=:all: --platform win_amd64 --python-version 3.11 \
        -d "$WORK/winwheels" "$dep"
    PIP_NO_INDEX=1 winrun "$PY" -m pip install -q --find-links "$(winpath "$WORK/winwheels")" \
        "$dep"
  fi
done

PLUG="$WORK/suite-plugins"
mkdir -p "$PLUG"
cat >"$PLUG/nosymlink.py" <<'PYEOF'
"""os.symlink fails as it does for a Windows account without the symlink privilege."""
import os


def _no_symlink(*args, **kwargs):
    raise OSError(22, "A required privilege is not held by the client", None, 1314)


os.symlink = _no_symlink
PYEOF

SRC=${SRC:-$WORK/suite-src}
rm -rf "$SRC" && mkdir -p "$SRC"
(cd "$REPO" && git ls-files -co --exclude-standard -z | xargs -0 tar cf - 2>/dev/null) |
    tar xf - -C "$SRC"
RESULTS=${RESULTS:-$WORK/suite-results}
rm -rf "$RESULTS" && mkdir -p "$RESULTS"

cd "$SRC" || exit 1
FILES=${FILES:-$(ls tests/test_*.py)}
export PYTHONPATH="$(winpath "$SRC");$(winpath "$PLUG")"
# The interpreter's folder on PATH, its Scripts folder not: as an install that never added it.
export WINEPATH='C:\py311'
printf '%-32s %6s %6s %6s %6s %7s\n' file passed failed skipped errors seconds >"$RESULTS/table"
status=0
for file in $FILES; do
  name=$(basename "$file" .py)
  started=$(date +%s)
  # shellcheck disable=SC2086
  winrun "$PY" -m pytest -p no:cacheprovider -p nosymlink -p timeout --timeout="$TIMEOUT" \
      --tb=short -rfEs "$file" ${K:+-k "$K"} ${ARGS:-} >"$RESULTS/$name.txt"
  code=$?
  seconds=$(($(date +%s) - started))
  summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error|deselected)|no tests ran' \
      "$RESULTS/$name.txt" | tail -1)
  count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '[0-9]+' || echo 0; }
  printf '%-32s %6s %6s %6s %6s %7s\n' "$name" "$(count passed)" "$(count failed)" \
      "$(count skipped)" "$(count error)" "$seconds" | tee -a "$RESULTS/table"
  if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then status=1; fi
done
echo
cat "$RESULTS/table"
echo "details: $RESULTS/<file>.txt"
exit "$status"
