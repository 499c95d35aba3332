#!/usr/bin/env bash
# progress.sh LABEL COMMAND...: runs COMMAND and, while it runs, prints a
# line every PROGRESS_EVERY seconds (default 20) saying it is still at work,
# so that a cold build, which can be silent for minutes, shows it is alive.
# With PROGRESS_LOG=FILE, the command's output goes to FILE instead (its
# last lines are shown if it fails), which keeps long log lines off a
# narrow terminal.
set -uo pipefail
label=$1
shift
every=${PROGRESS_EVERY:-20}
start=$(date +%s)
if [[ -n ${PROGRESS_LOG:-} ]]; then
  "$@" >"$PROGRESS_LOG" 2>&1 &
else
  "$@" &
fi
pid=$!
(
  while sleep "$every"; do
    echo ">> $label: still working, $(($(date +%s) - start))s so far"
  done
) &
ticker=$!
trap 'kill "$ticker" "$pid" 2>/dev/null' INT TERM
wait "$pid"
rc=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
if [[ $rc -eq 0 ]]; then
  echo ">> $label: done in $(($(date +%s) - start))s"
else
  echo ">> $label: failed after $(($(date +%s) - start))s (exit $rc)"
  if [[ -n ${PROGRESS_LOG:-} ]]; then
    echo ">> the last lines of $PROGRESS_LOG:"
    tail -n 30 "$PROGRESS_LOG"
  fi
fi
exit "$rc"
