#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite on every known kernel and print one table:
# cases down, kernels across, each cell the verdict, with each kernel's
# measured policy. A cell that differs from tools/expected/<kernel> is
# marked with '!' and the expected verdict; each kernel's document is also
# checked whole by compare-verdicts.sh. Exit status 1 on anything unexpected.

set -uo pipefail

readonly prog=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
readonly top
readonly compare=$top/tools/compare-verdicts.sh

usage()
{
	cat <<EOF
usage: $prog [--kernel NAME]... [--allow-deadlock] [--reuse] [--out DIR]

Runs the suite in a VM on each kernel (default: every kernel with a file
in tools/expected/) and prints the verdict matrix.

  --kernel NAME     a kernel of tools/expected/ (repeatable)
  --allow-deadlock  also the cases that can wedge the kernel; compared
                    with tools/expected/<kernel>.allow-deadlock
  --reuse           do not run the VMs: tabulate results already in --out
  --out DIR         results go to DIR/<kernel>/ (default: build/matrix)
  -h, --help        this text
EOF
}

kernels=()
allow=
suffix=
reuse=0
out=$top/build/matrix
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)
		[ -r "$top/tools/expected/${2:-/}" ] || {
			echo "$prog: no tools/expected/${2:-} for kernel '${2:-}'" >&2
			usage >&2
			exit 2
		}
		kernels+=("$2")
		shift
		;;
	--allow-deadlock) allow=--allow-deadlock suffix=.allow-deadlock ;;
	--reuse) reuse=1 ;;
	--out) out=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
if [ ${#kernels[@]} -eq 0 ]; then
	kernels=(stock vanilla patched)
fi

[ $reuse -eq 1 ] || "$top/tools/deps.sh" || exit 3

bad=0
for k in "${kernels[@]}"; do
	expected=$top/tools/expected/$k$suffix
	[ -r "$expected" ] || { echo "$prog: no $expected" >&2; exit 2; }
	mkdir -p "$out/$k"
	if [ $reuse -eq 0 ]; then
		start=$(date +%s)
		"$top/tools/vm.sh" --kernel "$k" $allow --out "$out/$k" > /dev/null
		echo $? > "$out/$k/status"
		echo "$prog: $k took $(($(date +%s) - start))s" >&2
	fi
	if ! "$compare" --status "$(cat "$out/$k/status" 2>/dev/null || echo 3)" \
			"$out/$k/results.ktap" "$expected" > "$out/$k/compare.log" 2>&1; then
		bad=1
	fi
	"$compare" --summary "$out/$k/results.ktap" > "$out/$k/summary" 2>/dev/null ||
		: > "$out/$k/summary"
done

# The case names, in the order of the first kernel's expectations.
mapfile -t cases < <(grep -hv '^#' "$top/tools/expected/${kernels[0]}$suffix" |
	awk 'NF && $1 != "policy" && $1 != "status" { print $1 }')

cell()
{
	local k=$1 name=$2 got want

	got=$(awk -v n="$name" '$1 == "result" && $3 == n { print $4 }' "$out/$k/summary" |
		tr '\n' ' ')
	got=${got% }
	want=$(awk -v n="$name" '$1 == n { print $2 }' "$top/tools/expected/$k$suffix")
	if [ "$got" = "$want" ]; then
		printf '%s' "$got"
	else
		printf '!%s(want %s)' "${got:-missing}" "${want:-none}"
	fi
}

printf '%-42s' "case"
for k in "${kernels[@]}"; do printf ' %-24s' "$k"; done
printf '\n%-42s' "policy"
for k in "${kernels[@]}"; do
	printf ' %-24s' "$(awk '$1 == "policy" { print $2 }' "$out/$k/summary")"
done
printf '\n'
for name in "${cases[@]}"; do
	printf '%-42s' "$name"
	for k in "${kernels[@]}"; do printf ' %-24s' "$(cell "$k" "$name")"; done
	printf '\n'
done
printf '%-42s' "exit status"
for k in "${kernels[@]}"; do printf ' %-24s' "$(cat "$out/$k/status" 2>/dev/null)"; done
printf '\n'

# Every check of every kernel's document, counted once.
passed=0
failed=0
for k in "${kernels[@]}"; do
	if grep -q '^FAIL' "$out/$k/compare.log"; then
		echo "# $k: unexpected:"
		grep '^FAIL' "$out/$k/compare.log" | sed 's/^/#   /'
	fi
	passed=$((passed + $(grep -c '^PASS' "$out/$k/compare.log")))
	failed=$((failed + $(grep -c '^FAIL' "$out/$k/compare.log")))
done
if [ $bad -ne 0 ] && [ $failed -eq 0 ]; then
	failed=1
fi
echo "matrix: $passed passed, $failed failed"
exit $bad
