#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the host test programs named as arguments (kselftest_harness.h
# programs, each ending with "# Totals: pass:N fail:N ... skip:N error:N"),
# one after the other, and end with one line that sums them:
# "N passed, N failed, N skipped". A program that fails without such a
# line, or exits non-zero, counts as one failure. Exit 0 if none failed.

set -u

pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$@"; do
	"$t" > "$log" 2>&1
	rc=$?
	cat "$log"
	totals=$(grep '^# Totals: pass:' "$log" | tail -n 1)
	if [ -z "$totals" ]; then
		echo "# ${t##*/}: no totals (exit $rc)"
		fail=$((fail + 1))
		continue
	fi
	read -r p f s e <<-END
	$(echo "$totals" | sed -E \
		's/.*pass:([0-9]+) fail:([0-9]+).*skip:([0-9]+) error:([0-9]+).*/\1 \2 \3 \4/')
	END
	pass=$((pass + p)) skip=$((skip + s)) fail=$((fail + f + e))
	# A program that exits non-zero with clean totals still failed.
	[ "$rc" -eq 0 ] || [ $((f + e)) -gt 0 ] || fail=$((fail + 1))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
