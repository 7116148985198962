#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-leftovers.sh - a killed run's .download.<pid>.* and mkinitramfs.<pid>.*
# the next `make vm` removes; a live process's stay, whatever their dates.
#
# usage: test-leftovers.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"

debs=$(cache_dir)/debs
mkdir -p "$debs"
# A pid that is gone: a child of ours, reaped.
true &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && die "pid $dead still runs: cannot fake a killed run"
# One named by a zombie, a killed run's process init has not reaped yet:
# the child of a sleep(1), which never waits for it.
(sleep 0 & echo $! >"$tmp/zombie"; exec sleep 60) &
for ((i = 0; i < 500; i++)); do
	zombie=$(cat "$tmp/zombie" 2>/dev/null) || true
	[ -z "$zombie" ] || [[ $(cat "/proc/$zombie/stat" 2>/dev/null) != *") Z "* ]] || break
	sleep 0.01
done
[[ $(cat "/proc/$zombie/stat" 2>/dev/null) == *") Z "* ]] || die "no zombie to name a file by"
left=("$debs/.download.$dead.test" "$tmp/mkinitramfs.$dead.test"
      "$tmp/mkinitramfs.$zombie.zombie")
# A live run's, one of them dated 1970 as mkinitramfs dates its root for cpio.
live=("$debs/.download.$$.test" "$tmp/mkinitramfs.$$.test" "$tmp/mkinitramfs.$$.epoch")
mkdir "${left[@]}" "${live[@]}" "$tmp/reused"
touch "${left[0]}/partial.deb"
touch -d @0 "${live[2]}"
# And one named by a pid reused since: a process begun after the file was
# made (its birth time, kept by a rename; the clock past may_own's slack).
born=$(stat -c %W "$tmp/reused")
if [ "$born" -gt 0 ]; then
	for ((i = 0; i < 200 && EPOCHSECONDS < born + 3; i++)); do
		sleep 0.05
	done
	sleep 300 &
	left+=("$tmp/mkinitramfs.$!.reused")
	mv "$tmp/reused" "${left[3]}"
else
	skip "mkinitramfs of a reused pid: removed: $tmp keeps no birth times"
fi
trap 'rm -rf "${left[@]}" "${live[@]}"; scratch_end' EXIT

run_to "$tmp/out" env TMPDIR="$tmp" make -s -C "$TOP" vm
details=$tmp/out check "make vm ran (exit $rc)" test "$rc" -eq 0
for f in "${left[@]}"; do
	verify "${f##*/} of a killed process (or a reused pid): removed" [ ! -e "$f" ]
done
for f in "${live[@]}"; do
	verify "${f##*/} of a live process: kept" [ -e "$f" ]
done
verify "the removal is said" \
	grep -q "removing .download.$dead.test, left behind by process $dead" "$tmp/out"

checks_summary
