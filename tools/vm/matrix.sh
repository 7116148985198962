#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite on every known kernel and print one table:
# cases down, kernels across, each cell the verdict, with each kernel's
# measured policy. A cell that differs from the kernel's column of
# tools/expected/verdicts is marked with '!' and the expected verdict; each
# kernel's document is also checked whole by tools/expected/expected compare
# (DIR/<kernel>/compare.log), its checks counted by the KTAP reader,
# tools/ktap/ktap, which reads the documents too. Exit status 1 on anything
# unexpected.
#
# A kernel's name in the table says how vm.sh makes it (vm_args): by
# default every kernel of the table that this vm.sh can make, the others
# named on stderr and left out; a kernel named with --kernel that vm.sh
# cannot make is an error (exit status 3).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly expected=$TOOLS/expected/expected
readonly ktap=$TOOLS/ktap/ktap
readonly vm=$TOOLS/vm/vm.sh

usage()
{
	cat <<EOF
usage: $PROG [--kernel NAME]... [--allow-deadlock] [--reuse] [--out DIR]
       $PROG --list

Runs the suite in a VM on each kernel (default: every kernel of
tools/expected/verdicts that vm.sh can make) and prints the verdict matrix.

  --kernel NAME     a kernel of tools/expected/verdicts (repeatable):
                      stock                 Debian bookworm's stock kernel
                      stock-RELEASE         the stock kernel of RELEASE
                                            (vm.sh --dist RELEASE)
                      vanilla, patched, fixed  built from linux-source-6.1
                      vanilla-V, ...           built from linux-source-V
                                               (vm.sh --kernel vanilla --src V)
                      KERNEL+BROKEN         a source kernel with the broken
                                            variant tools/kernel/patches/
                                            BROKEN/<X.Y>/ on top (vm.sh
                                            --patch): it must differ from
                                            KERNEL in a verdict
  --allow-deadlock  also the cases that can wedge the kernel; compared
                    with the kernel's verdicts with deadlocks allowed
  --reuse           do not run the VMs: tabulate results already in --out
  --list            print the kernels it would run, one a line, and the
                    ones left out on stderr
  --out DIR         results go to DIR/<kernel>/ (default: build/matrix)
  -h, --help        this text
EOF
}

kernels=()
allow=
reuse=0
list=0
out=$TOP/build/matrix
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)
		grep -qxF -- "${2:-/}" <<<"$("$expected" kernels)" ||
			usage_error "no kernel '${2:-}' in tools/expected/verdicts"
		kernels+=("$2")
		shift
		;;
	--allow-deadlock) allow=--allow-deadlock ;;
	--reuse) reuse=1 ;;
	--list) list=1 ;;
	--out) need_arg "$1" $#; out=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done

# vm_args NAME: vm.sh's options that make the kernel NAME of the table, one
# a line; nothing for a name of no known form.  KERNEL+BROKEN is the source
# kernel KERNEL with the patches of tools/kernel/patches/BROKEN/<X.Y>/ on
# top, X.Y KERNEL's source series: a broken variant, a test fixture.
vm_args()
{
	local base series

	case $1 in
	*+*)
		base=${1%%+*}
		is_source_variant "${base%%-*}" || return 0
		series=6.1
		[ "$base" = "${base%%-*}" ] || series=${base#*-}
		set -- "$TOOLS/kernel/patches/${1#*+}/$series"/*.patch
		[ -f "$1" ] || return 0
		vm_args "$base"
		printf -- '--patch\n%s\n' "$@"
		;;
	stock) printf '%s\n' --kernel stock --dist bookworm ;;
	stock-*) printf '%s\n' --kernel stock --dist "${1#stock-}" ;;
	*)
		is_source_variant "${1%%-*}" || return 0
		printf '%s\n' --kernel "${1%%-*}"
		[ "$1" = "${1%%-*}" ] || printf '%s\n' --src "${1#*-}"
		;;
	esac
}

# vm_cannot_make NAME: why this vm.sh cannot make the kernel NAME, or
# nothing when it can: every option vm_args gives is one vm.sh --help lists.
vm_cannot_make()
{
	local arg

	[ -n "$(vm_args "$1")" ] || { echo "no vm.sh options for a kernel named '$1'"; return; }
	for arg in $(vm_args "$1" | grep -e '^--'); do
		if ! grep -qe "^ *$arg " <<<"$vm_help"; then
			echo "vm.sh has no $arg option yet"
			return
		fi
	done
}

vm_help=$("$vm" --help)
if [ ${#kernels[@]} -eq 0 ]; then
	while read -r k; do
		why=$(vm_cannot_make "$k")
		if [ -z "$why" ] || { [ $reuse -eq 1 ] && [ -e "$out/$k/results.ktap" ]; }; then
			kernels+=("$k")
		elif [ $reuse -eq 0 ]; then
			log "$k left out: $why"
		fi
	done < <("$expected" kernels)
elif [ $reuse -eq 0 ]; then
	for k in "${kernels[@]}"; do
		why=$(vm_cannot_make "$k")
		[ -z "$why" ] || die "cannot make kernel $k: $why"
	done
fi
if [ $list -eq 1 ]; then
	printf '%s\n' "${kernels[@]}"
	exit 0
fi

[ $reuse -eq 1 ] || "$TOOLS/deps.sh" || die "missing packages"

bad=0
for k in "${kernels[@]}"; do
	mkdir -p "$out/$k"
	# shellcheck disable=SC2086 # $allow is one option or none
	"$expected" $allow column "$k" > "$out/$k/expected" || exit 2
	if [ $reuse -eq 0 ]; then
		start=$(date +%s)
		rc=0
		mapfile -t args < <(vm_args "$k")
		# shellcheck disable=SC2086 # $allow is one option or none
		"$vm" "${args[@]}" $allow --out "$out/$k" > /dev/null || rc=$?
		echo "$rc" > "$out/$k/status"
		log "$k took $(($(date +%s) - start))s"
	fi
	# shellcheck disable=SC2086 # $allow is one option or none
	"$expected" $allow compare --status "$(cat "$out/$k/status" 2>/dev/null || echo 3)" \
		"$k" "$out/$k/results.ktap" > "$out/$k/compare.log" 2>&1 || bad=1
	"$ktap" verdicts "$out/$k/results.ktap" > "$out/$k/verdicts" 2>/dev/null ||
		: > "$out/$k/verdicts"
done

# The case names, in the table's order.
mapfile -t cases < <("$expected" cases)

cell()
{
	local k=$1 name=$2 got want

	got=$(awk -v n="$name" '$2 == n { print $3 }' "$out/$k/verdicts" | tr '\n' ' ')
	got=${got% }
	want=$(awk -v n="$name" '$1 == n { print $2 }' "$out/$k/expected")
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
	printf ' %-24s' "$("$ktap" policy "$out/$k/results.ktap" 2>/dev/null)"
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
	checks=$("$ktap" verdicts "$out/$k/compare.log" 2>/dev/null) || checks=''
	unexpected=$(sed -n 's/^[0-9]* \(.*\) not-ok$/#   \1/p' <<<"$checks")
	[ -z "$unexpected" ] || printf '# %s: unexpected:\n%s\n' "$k" "$unexpected"
	passed=$((passed + $(grep -c ' ok$' <<<"$checks" || true)))
	failed=$((failed + $(grep -c ' not-ok$' <<<"$checks" || true)))
done

# A broken kernel (KERNEL+BROKEN) run beside its KERNEL must differ from it
# in a case's verdict: else the suite cannot tell the broken change from
# the one it breaks.
for k in "${kernels[@]}"; do
	[[ $k == *+* ]] || continue
	base=${k%%+*}
	if ! printf '%s\n' "${kernels[@]}" | grep -qxF -- "$base"; then
		echo "# $k: not compared with $base, which this run left out"
		continue
	fi
	differ=$(LC_ALL=C join -o 0,1.2,2.2 \
		<(awk '{ print $2, $3 }' "$out/$base/verdicts" | LC_ALL=C sort) \
		<(awk '{ print $2, $3 }' "$out/$k/verdicts" | LC_ALL=C sort) | awk '$2 != $3')
	if [ ! -s "$out/$base/verdicts" ] || [ ! -s "$out/$k/verdicts" ]; then
		echo "# $k: no verdicts of $base or of $k to compare"
		failed=$((failed + 1))
		bad=1
	elif [ -n "$differ" ]; then
		echo "# $k differs from $base (case, $base, $k): $(tr '\n' ';' <<<"$differ")"
		passed=$((passed + 1))
	else
		echo "# $k: every case's verdict is $base's: the suite cannot tell them apart"
		failed=$((failed + 1))
		bad=1
	fi
done
if [ $bad -ne 0 ] && [ $failed -eq 0 ]; then
	failed=1
fi
echo "matrix: $passed passed, $failed failed"
exit $bad
