#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# matrix.sh - run the suite in a VM on each kernel of tools/expected/verdicts
# (its name says how vm.sh makes it: vm_args), then check and tabulate the
# runs with tools/expected/expected matrix.

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

Runs the suite in a VM on each kernel and prints the verdict matrix.

  --kernel NAME     a kernel of tools/expected/verdicts (default: each one
                    vm.sh can make, the others named on stderr)
  --allow-deadlock  also the cases that can wedge the kernel
  --reuse           no VM: tabulate the results already in --out
  --list            print the kernels it would run
  --out DIR         results go to DIR/<kernel>/ (default: build/matrix)
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

# vm_args NAME: vm.sh's options that make the kernel NAME, one a line (none:
# it cannot): stock (bookworm's), stock-RELEASE, VARIANT (linux-source-6.1),
# VARIANT-X.Y (linux-source-X.Y), KERNEL+BROKEN (KERNEL with the patches of
# tools/kernel/patches/BROKEN/X.Y/).
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
