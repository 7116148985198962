#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-leftovers.sh - what a killed run leaves behind, the next run removes:
# a download in the cache's debs/ (.download.<pid>.*) and an initramfs
# being packed ($TMPDIR/mkinitramfs.<pid>.*), named by a process that is
# gone, a zombie, or a pid reused since; those of a live process that began
# before they last changed are kept.  One warm `make vm` (20 s).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

case ${1:-} in
'') ;;
-h|--help) echo "Usage: $PROG [--help]"; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

tmp=$(mktemp -d)
debs=$(cache_dir)/debs
mkdir -p "$debs"
# A pid that is gone: a child of ours that has exited and been reaped.
true &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && die "pid $dead still runs: cannot fake a killed run"
# One named by a zombie, a killed run's process init has not reaped yet:
# the child of a sleep(1), which never waits for it.
(sleep 0 & echo $! >"$tmp/zombie"; exec sleep 60) &
zombie_parent=$!
for ((i = 0; i < 500; i++)); do
	zombie=$(cat "$tmp/zombie" 2>/dev/null) || true
	[ -z "$zombie" ] || [[ $(cat "/proc/$zombie/stat" 2>/dev/null) != *") Z "* ]] || break
	sleep 0.01
done
[[ $(cat "/proc/$zombie/stat" 2>/dev/null) == *") Z "* ]] || die "no zombie to name a file by"
# And one named by a pid reused since: ours, which began after the file
# last changed (an hour ago).
left=("$debs/.download.$dead.test" "$tmp/mkinitramfs.$dead.test" "$tmp/mkinitramfs.$$.reused"
      "$tmp/mkinitramfs.$zombie.zombie")
live=("$debs/.download.$$.test" "$tmp/mkinitramfs.$$.test")
trap 'kill "$zombie_parent" 2>/dev/null || true; rm -rf "$tmp" "${left[@]}" "${live[@]}"' EXIT
mkdir "${left[@]}" "${live[@]}"
touch "${left[0]}/partial.deb"
touch -d '1 hour ago' "${left[2]}"

status=0
TMPDIR=$tmp make -s -C "$TOP" vm >"$tmp/out" 2>&1 || status=$?
verify "make vm ran (exit $status)" [ "$status" -eq 0 ]
[ "$status" -eq 0 ] || tail -n 20 "$tmp/out" | sed 's/^/    /'
for f in "${left[@]}"; do
	verify "${f##*/} of a killed process (or a reused pid): removed" [ ! -e "$f" ]
done
for f in "${live[@]}"; do
	verify "${f##*/} of a live process: kept" [ -e "$f" ]
done
verify "the removal is said" \
	grep -q "removing .download.$dead.test, left behind by process $dead" "$tmp/out"

checks_summary
