#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run the module_async suite in a QEMU guest on a chosen kernel.
#
# Fetches (or builds) the kernel, builds the runner and the test modules
# against that kernel, packs them into an initramfs and boots it. The KTAP
# document goes to stdout and to build/vm/<kernel>/results.ktap, the guest's
# console (the kernel log) to build/vm/<kernel>/console.log. The exit status
# is the guest suite's: 0 nothing failed, 1 a case failed, 4 all skipped;
# 3 when the VM itself failed.

set -euo pipefail

readonly prog=${0##*/}
top=$(cd "$(dirname "$0")/.." && pwd)
readonly top

usage()
{
	cat <<EOF
usage: $prog [options] [-- suite arguments]

Runs the suite in a QEMU guest and prints its KTAP output.

  --kernel stock       Debian bookworm's stock kernel (default)
  --kver VERSION       Debian package version of the kernel (default: the
                       version linux-image-amd64 points to)
  --allow-deadlock     run the cases that can wedge the kernel for good
  --timeout SECONDS    bound on the whole VM run (default: 300)
  --out DIR            where results go (default: build/vm/<kernel>)
  -h, --help           this text

Suite arguments after -- are passed to module_async.sh in the guest
(see: module_async.sh --help).
EOF
}

die()
{
	echo "$prog: $*" >&2
	exit 3
}

log()
{
	echo "$prog: $*" >&2
}

kernel=stock
kver=
timeout=300
out=
suite_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift ;;
	--kver) kver=${2:?}; shift ;;
	--allow-deadlock) suite_args+=(--allow-deadlock) ;;
	--timeout) timeout=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; suite_args+=("$@"); break ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
case "$timeout" in
'' | *[!0-9]*) echo "$prog: --timeout wants whole seconds, not '$timeout'" >&2
	usage >&2; exit 2 ;;
esac

case "$kernel" in
stock)
	entry=$("$top/tools/fetch-kernel.sh" ${kver:+--kver "$kver"} | tail -n 1) ||
		die "could not fetch the stock kernel"
	;;
*)
	echo "$prog: unknown kernel '$kernel'" >&2
	usage >&2
	exit 2
	;;
esac

out=${out:-$top/build/vm/$kernel}
stage=$out/suite
krel=$(cat "$entry/krel")
log "kernel $kernel: $krel ($entry)"

"$top/tools/deps.sh" || die "missing packages"

# The runner does not depend on the kernel: one build serves every VM.
make -s -C "$top" ${kver:+KVER="$kver"} OUTPUT="$top/build" all >&2 ||
	die "could not build the runner"

# Kbuild writes its output next to the sources of an external module, so
# each kernel gets its own copy of modules/.
mkdir -p "$out"
rsync -a --delete --exclude '*.ko' --exclude '*.o' "$top/modules/" "$out/modules-build/"
make -s -C "$out/modules-build" KDIR="$entry/kdir" >&2 ||
	die "could not build the test modules against $entry/kdir"

rm -rf "$stage"
mkdir -p "$stage/modules"
cp "$top/module_async.sh" "$top/build/module_async" "$top/config" "$stage/"
[ -e "$top/settings" ] && cp "$top/settings" "$stage/"
cp "$out"/modules-build/*.ko "$stage/modules/"

"$top/tools/mkinitramfs.sh" --kernel "$entry" --suite "$stage" \
	--out "$out/initramfs.cpio.gz" >&2 || die "could not build the initramfs"

exec "$top/tools/vm-run.sh" --kernel "$entry" --initrd "$out/initramfs.cpio.gz" \
	--out "$out" --timeout "$timeout" -- "${suite_args[@]}"
