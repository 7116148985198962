#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run the module_async suite in a QEMU guest on a chosen kernel.
#
# Fetches (or builds) the kernel, builds the runner and the test modules
# against that kernel, packs them into an initramfs and boots it. The guest
# runs module_async.sh directly or, with --via run_kselftest, the kselftest
# install (tools/ksft-install.sh) by "run_kselftest.sh -c module_async",
# which honours settings and prints the kselftest runner's KTAP with the
# suite's nested in it. The KTAP document goes to stdout and to
# build/vm/<kernel>/results.ktap, the guest's console (the kernel log) to
# build/vm/<kernel>/console.log. The exit status is the guest suite's: 0
# nothing failed, 1 a case failed, 4 all skipped; 3 when the VM itself
# failed.

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
  --via WAY            how the guest runs the suite:
                         direct         module_async.sh (default)
                         run_kselftest  the kselftest install, by
                                        run_kselftest.sh -c module_async
  --timeout SECONDS    bound on each boot of the VM (default: 300; with
                       run_kselftest at least settings' timeout + 120); a
                       run that wedges the kernel goes on in fresh VMs
  --out DIR            where results go (default: build/vm/<kernel>)
  -h, --help           this text

Suite arguments after -- are passed to module_async.sh in the guest
(see: module_async.sh --help), with run_kselftest in
KSELFTEST_MODULE_ASYNC_SH_ARGS.
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
via=direct
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
	--via) via=${2:?}; shift ;;
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
case "$via" in
direct | run_kselftest) ;;
*) echo "$prog: --via wants direct or run_kselftest, not '$via'" >&2
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

mkdir -p "$out"
if [ "$via" = run_kselftest ]; then
	# The install the kselftest way, from a kernel tree holding the suite;
	# the runner's bound is settings' timeout, and a boot must outlast it.
	install=$("$top/tools/ksft-install.sh" --install "$out/kselftest" \
		--kdir "$entry/kdir" | tail -n 1) || die "could not make the kselftest install"
	"$top/tools/mkinitramfs.sh" --kernel "$entry" --kselftest "$install" \
		--out "$out/initramfs.cpio.gz" >&2 || die "could not build the initramfs"
	ksft_timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$install/module_async/settings")
	ksft_timeout=${ksft_timeout:-45}	# runner.sh's default
	[ "$timeout" -ge $((ksft_timeout + 120)) ] || timeout=$((ksft_timeout + 120))
	exec "$top/tools/vm-run.sh" --kernel "$entry" --initrd "$out/initramfs.cpio.gz" \
		--out "$out" --timeout "$timeout" -- "${suite_args[@]}"
fi

# The runner does not depend on the kernel: one build serves every VM.
make -s -C "$top" ${kver:+KVER="$kver"} OUTPUT="$top/build" all >&2 ||
	die "could not build the runner"

# Kbuild writes its output next to the sources of an external module, so
# each kernel gets its own copy of modules/.
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
