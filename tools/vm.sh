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

  --kernel KERNEL      which kernel to boot:
                         stock    Debian bookworm's stock kernel (default)
                         vanilla  linux-source-6.1 built from tinyconfig+config
                         patched  the same with the 3.8 flag (tools/patches/)
                         FILE     a bzImage of your own; needs --kdir
  --kdir DIR           the configured build tree of --kernel FILE
  --patch FILE         build vanilla with this candidate patch applied on top
                       (repeatable; --kernel vanilla or patched)
  --kver VERSION       Debian package version of the kernel or source
                       (default: the version linux-image-amd64 points to)
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
kdir=
patches=()
timeout=300
out=
suite_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift ;;
	--kver) kver=${2:?}; shift ;;
	--kdir) kdir=${2:?}; shift ;;
	--patch)
		[ -r "${2:-}" ] || { echo "$prog: cannot read patch '${2:-}'" >&2; exit 2; }
		patches+=(--patch "$(cd "$(dirname "$2")" && pwd)/${2##*/}")
		shift
		;;
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

# A kernel of the user's own: an entry of the same layout as the fetched and
# built ones (vmlinuz, krel, lib/modules/<krel>/, kdir), made in $1.
custom_entry()
{
	local dir=$1 krel

	[ -n "$kdir" ] || { echo "$prog: --kernel FILE needs --kdir" >&2; exit 2; }
	[ -r "$kdir/include/config/kernel.release" ] ||
		{ echo "$prog: $kdir is not a configured kernel build tree" >&2; exit 2; }
	krel=$(cat "$kdir/include/config/kernel.release")
	rm -rf "$dir"
	mkdir -p "$dir"
	ln -s "$(readlink -f "$kernel")" "$dir/vmlinuz"
	ln -s "$(readlink -f "$kdir")" "$dir/kdir"
	echo "$krel" > "$dir/krel"
	make -s -C "$kdir" modules_install INSTALL_MOD_PATH="$dir" >&2 ||
		die "could not install the modules of $kdir"
	echo "$dir"
}

if [ ${#patches[@]} -gt 0 ] && [ "$kernel" != vanilla ] && [ "$kernel" != patched ]; then
	echo "$prog: --patch needs --kernel vanilla or patched" >&2
	exit 2
fi
name=$kernel
case "$kernel" in
stock)
	entry=$("$top/tools/fetch-kernel.sh" ${kver:+--kver "$kver"} | tail -n 1) ||
		die "could not fetch the stock kernel"
	;;
vanilla | patched)
	entry=$("$top/tools/build-kernel.sh" --variant "$kernel" ${kver:+--kver "$kver"} \
		"${patches[@]}" | tail -n 1) || die "could not build the $kernel kernel"
	[ ${#patches[@]} -eq 0 ] || name=$kernel+patches
	;;
*)
	if [ ! -f "$kernel" ]; then
		echo "$prog: unknown kernel '$kernel' (stock, vanilla, patched or a file)" >&2
		usage >&2
		exit 2
	fi
	name=custom
	entry=$(custom_entry "$top/build/vm/custom/kernel")
	;;
esac

out=${out:-$top/build/vm/$name}
stage=$out/suite
krel=$(cat "$entry/krel")
log "kernel $name: $krel ($entry)"

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
