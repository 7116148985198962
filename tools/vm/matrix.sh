#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite in a VM on every known kernel, then check each
# run and tabulate them with tools/expected/expected matrix.  A kernel's name
# in tools/expected/verdicts says how vm.sh makes it (vm_args): by default
# every kernel of the table this vm.sh can make, the others named on stderr
# and left out; one named with --kernel that it cannot make is an error.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly expected=$TOOLS/expected/expected

usage()
{
	cat <<EOF
usage: $PROG [--kernel NAME]... [--allow-deadlock] [--reuse] [--out DIR]
       $PROG --list

Runs the suite in a VM on each kernel (default: every kernel of
tools/expected/verdicts that vm.sh can make) and prints the verdict matrix.

  --kernel NAME     a kernel of tools/expected/verdicts (repeatable): stock
                    (bookworm's), stock-RELEASE (vm.sh --dist RELEASE),
                    VARIANT (built from linux-source-6.1), VARIANT-X.Y (from
                    linux-source-X.Y), KERNEL+BROKEN (KERNEL with the patches
                    of tools/kernel/patches/BROKEN/<X.Y>/: it must differ
                    from KERNEL in a verdict)
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

if [ ${#kernels[@]} -eq 0 ]; then
	while read -r k; do
		if [ -n "$(vm_args "$k")" ] ||
		   { [ $reuse -eq 1 ] && [ -e "$out/$k/results.ktap" ]; }; then
			kernels+=("$k")
		elif [ $reuse -eq 0 ]; then
			log "$k left out: no vm.sh options make it"
		fi
	done < <("$expected" kernels)
elif [ $reuse -eq 0 ]; then
	for k in "${kernels[@]}"; do
		[ -n "$(vm_args "$k")" ] || die "cannot make kernel $k: no vm.sh options make it"
	done
fi
if [ $list -eq 1 ]; then
	printf '%s\n' "${kernels[@]}"
	exit 0
fi
[ ${#kernels[@]} -gt 0 ] || die "no kernel to run or tabulate"

if [ $reuse -eq 0 ]; then
	"$TOOLS/deps.sh" || die "missing packages"
	for k in "${kernels[@]}"; do
		mkdir -p "$out/$k"
		start=$(date +%s)
		rc=0
		mapfile -t args < <(vm_args "$k")
		# shellcheck disable=SC2086 # $allow is one option or none
		"$TOOLS/vm/vm.sh" "${args[@]}" $allow --out "$out/$k" > /dev/null || rc=$?
		echo "$rc" > "$out/$k/status"
		log "$k took $(($(date +%s) - start))s"
	done
fi
# shellcheck disable=SC2086 # $allow is one option or none
exec "$expected" $allow matrix "$out" "${kernels[@]}"
