#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run the module_async suite in a QEMU guest on a chosen kernel.
#
# Fetches (or builds) the kernel, builds the runner and the test modules
# against that kernel, packs them into an initramfs and boots it. The guest
# runs module_async.sh directly or, with --via run_kselftest, the kselftest
# install (tools/vm/ksft-install.sh) by "run_kselftest.sh -c module_async",
# which honours settings and prints the kselftest runner's KTAP with the
# suite's nested in it. The KTAP document goes to stdout and to
# build/vm/<kernel>/results.ktap, the guest's console (the kernel log) to
# build/vm/<kernel>/console.log. The exit status is the guest suite's: 0
# nothing failed, 1 a case failed, 4 all skipped; 2 bad usage (bad
# options, a KERNEL file that is no bzImage, a release or series not in
# tools/lib.sh's DEB_RELEASES, no HOME for the cache, a path make cannot
# take: the checkout's, the cache's, --kdir's, --ksrc's), said before any
# work; 3 when the VM or a step before it (packages, kernel, build, a
# cache or results directory that cannot be written) failed.  Never 1 for
# a failure of the host's.
#
# The Debian packages it needs are installed (tools/deps.sh) before any of
# them is used, right after the options are read.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# A failure nothing checks is the host's (exit 3), never a case's.
errors_are_infra

usage()
{
	cat <<EOF
usage: $PROG [options] [-- suite arguments]

Runs the suite in a QEMU guest and prints its KTAP output.

  --kernel KERNEL      which kernel to boot:
                         stock    Debian's stock kernel of --dist (the
                                  default without --patch)
                         vanilla  linux-source-6.1 (or --src) built from
                                  tinyconfig+config (the default with --patch
                                  or --src)
                         patched  the same with the 3.8 flag
                                  (tools/kernel/patches/patched/<X.Y>/)
                         fixed    the same with module init waiting only
                                  for its own async work
                                  (tools/kernel/patches/fixed/<X.Y>/)
                         window   the same with the fixed series of
                                  2026-12-04, which misses chained work
                                  (tools/kernel/patches/window/<X.Y>/)
                         FILE     a bzImage of your own; needs --kdir
  --kdir DIR           for --kernel FILE: its configured build tree, or its
                       headers (e.g. /usr/src/linux-headers-<release>)
  --moddir DIR         for --kernel FILE: its installed module tree,
                       lib/modules/<release>/ (default: a build tree's own
                       modules; for headers, the lib/modules/<release>/ of
                       the root the headers are in)
  --patch FILE         build from source with this candidate patch applied on
                       top (repeatable; a kernel built from source)
  --src X.Y            for a kernel built from source: build from Debian's
                       linux-source-X.Y: 6.1 (the default), 6.12 or 7.2;
                       results go to build/vm/KERNEL-X.Y unless --out (6.1's
                       stay in build/vm/KERNEL)
  --ksrc DIR           for a kernel built from source (vanilla, the default): build
                       your own kernel tree DIR instead, out of tree, DIR
                       only read (tools/kernel/build-kernel.sh --ksrc);
                       results go to build/vm/ksrc-<DIR's name>[-patched]
  --dist RELEASE       for --kernel stock: the Debian release whose kernel
                       to boot: bullseye, bookworm (the default, or \$DIST),
                       bookworm-backports, trixie, sid; results go to
                       build/vm/stock-RELEASE unless --out.  With --src: the
                       release to take the source from (default: the one
                       that carries it: trixie 6.12, sid 7.2)
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
  --prepare            make the kernel, runner, modules and initramfs, boot
                       nothing: print "name NAME" (the kernel's name in
                       build/vm/), "entry DIR" (its kernel entry), "initrd
                       FILE" and "cases FILE" (the runner's --list)
  -h, --help           this text

Suite arguments after -- are passed to module_async.sh in the guest
(see: module_async.sh --help), with run_kselftest in
KSELFTEST_MODULE_ASYNC_SH_ARGS.
EOF
}


kernel=
dist=${DIST:-}
src=
ksrc=
kver=
kdir=
moddir=
patches=()
timeout=300
via=direct
out=
prepare=0
suite_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) need_arg "$1" $#; kernel=$2; shift ;;
	--dist) need_arg "$1" $#; dist=$2; shift ;;
	--src) need_arg "$1" $#; src=$2; shift ;;
	--ksrc) need_arg "$1" $#; ksrc=$2; shift ;;
	--kver) need_arg "$1" $#; kver=$2; shift ;;
	--kdir) need_arg "$1" $#; kdir=$2; shift ;;
	--moddir) need_arg "$1" $#; moddir=$2; shift ;;
	--patch)
		[ -r "${2:-}" ] || usage_error "cannot read patch '${2:-}'"
		grep -q '^+++ ' "$2" || usage_error "$2 is no patch (it has no +++ line)"
		patches+=(--patch "$(cd "$(dirname "$2")" && pwd)/${2##*/}")
		shift
		;;
	--allow-deadlock) suite_args+=(--allow-deadlock) ;;
	--timeout) need_arg "$1" $#; timeout=$2; shift ;;
	--via) need_arg "$1" $#; via=$2; shift ;;
	--out) need_arg "$1" $#; out=$2; shift ;;
	--prepare) prepare=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; suite_args+=("$@"); break ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done
case "$timeout" in
'' | *[!0-9]* | 0*) usage_error "--timeout wants whole seconds (1 or more), not '$timeout'" ;;
esac
case "$via" in
direct | run_kselftest) ;;
*) usage_error "--via wants direct or run_kselftest, not '$via'" ;;
esac
[ -z "$kver" ] || check_debversion "$kver"
[ -z "$dist" ] || check_release "$dist"

# kernel_release KDIR: the release a build or headers tree is for, as the
# kernel reports it (Debian's headers say 6.1.192 in kernel.release but
# 6.1.0-57-amd64 in utsrelease.h, which is what uname and vermagic say).
kernel_release()
{
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null
}

# module_tree KDIR KREL: the installed modules of a headers tree: the
# lib/modules/KREL/ of the root the headers are unpacked or installed in
# (ROOT/usr/src/linux-headers-KREL; merged /usr: ROOT/usr/lib/modules), or
# the directory whose "build" link KDIR was given as.
module_tree()
{
	local kdir=$1 krel=$2 root d

	root=$(cd "$kdir/../../.." && pwd)
	for d in "$(dirname "$kdir")" "$root/lib/modules/$krel" "$root/usr/lib/modules/$krel"; do
		if [ "${d##*/}" = "$krel" ] && [ -d "$d/kernel" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# A kernel of the user's own: an entry of the same layout as the fetched and
# built ones (vmlinuz, krel, lib/modules/<krel>/, kdir), made in $1.  The
# modules come from --moddir, else from a build tree by modules_install,
# else from beside the headers.
custom_entry()
{
	local dir=$1 krel mods f

	krel=$(kernel_release "$kdir")
	rm -rf "$dir"
	mkdir -p "$dir/lib/modules/$krel"
	ln -s "$(readlink -f "$kernel")" "$dir/vmlinuz"
	ln -s "$(readlink -f "$kdir")" "$dir/kdir"
	echo "$krel" > "$dir/krel"
	if [ -z "$moddir" ] && [ -f "$kdir/modules.order" ]; then
		make -s -C "$kdir" modules_install INSTALL_MOD_PATH="$dir" >&2 ||
			die "could not install the modules of $kdir"
		echo "$dir"
		return
	fi
	[ -n "$moddir" ] || moddir=$(module_tree "$kdir" "$krel")
	# Links to the user's tree, indexes of our own: nothing is written there.
	mods=$dir/lib/modules/$krel
	for f in "$moddir"/*; do
		case ${f##*/} in
		build | source | modules.*) ;;
		*) ln -s "$(readlink -f "$f")" "$mods/${f##*/}" ;;
		esac
	done
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ ! -e "$moddir/$f" ] || cp "$moddir/$f" "$mods/"
	done
	depmod -b "$dir" "$krel" || die "depmod failed on the modules in $moddir"
	log "modules of $krel from $moddir"
	echo "$dir"
}

# Which kernel: with candidate patches or a source series, the source build.
if [ -z "$kernel" ]; then
	kernel=stock
	[ ${#patches[@]} -eq 0 ] && [ -z "$src$ksrc" ] || kernel=vanilla
fi
if ! is_source_variant "$kernel"; then
	[ ${#patches[@]} -eq 0 ] ||
		usage_error "--patch applies to a kernel built from source ($SOURCE_VARIANTS)," \
			"not to '$kernel'"
	if [ "$kernel" != stock ] && [ ! -f "$kernel" ]; then
		case $kernel in
		*/*) usage_error "no such kernel image: $kernel" ;;
		*) usage_error "unknown kernel '$kernel' (stock, $SOURCE_VARIANTS or a file)" ;;
		esac
	fi
	# A bzImage has the boot protocol's header: "HdrS" at 0x202.
	if [ -f "$kernel" ] &&
	   [ "$(head -c $((0x206)) -- "$kernel" | tail -c 4)" != HdrS ]; then
		usage_error "$kernel is no bzImage (no boot protocol header:" \
			"\"HdrS\" at offset 0x202)"
	fi
fi
if [ -n "$src" ]; then
	is_source_variant "$kernel" ||
		usage_error "--src goes with a kernel built from source ($SOURCE_VARIANTS)," \
			"not '$kernel'"
	[[ $src =~ ^[0-9]+\.[0-9]+$ ]] ||
		usage_error "--src wants a series X.Y (e.g. 7.2), not '$src'"
	check_series "$src"
fi
if [ -n "$ksrc" ]; then
	is_source_variant "$kernel" ||
		usage_error "--ksrc goes with a kernel built from source ($SOURCE_VARIANTS)," \
			"not '$kernel'"
	[ -z "$src$dist$kver" ] ||
		usage_error "--ksrc is a tree of your own: not with --src, --dist or --kver"
	why=$(ksrc_problem "$ksrc")
	[ -z "$why" ] || usage_error "--ksrc $ksrc: $why"
fi
[ -z "$dist" ] || [ "$kernel" = stock ] || [ -n "$src" ] ||
	usage_error "--dist goes with the stock kernel or --src, not '$kernel' alone"
if [ -f "$kernel" ] || [ -n "$kdir$moddir" ]; then
	[ -f "$kernel" ] || usage_error "--kdir and --moddir go with --kernel FILE"
	[ -n "$kdir" ] || usage_error "--kernel FILE needs --kdir"
	if [ ! -f "$kdir/Makefile" ] || [ -z "$(kernel_release "$kdir")" ]; then
		usage_error "$kdir is neither a configured kernel build tree nor kernel headers"
	fi
	why=$(path_problem "$(readlink -f "$kdir")")
	[ -z "$why" ] || usage_error "--kdir $kdir: $why"
	[ -z "$moddir" ] || [ -d "$moddir/kernel" ] ||
		usage_error "$moddir is no module tree (no kernel/ in it)"
	if [ -z "$moddir" ] && [ ! -f "$kdir/modules.order" ] &&
	   ! module_tree "$kdir" "$(kernel_release "$kdir")" >/dev/null; then
		usage_error "$kdir holds headers only and no lib/modules/<release>/ is" \
			"beside them: name the kernel's module tree with --moddir (MODDIR=)"
	fi
fi

# run_name: the kernel's name in build/vm/, the default place of its
# results.
run_name()
{
	name=$kernel
	if [ "$kernel" = stock ]; then
		[ -z "$dist" ] || name=stock-$dist
	elif is_source_variant "$kernel"; then
		# 6.1, the default source, keeps the names it had before --src.
		[ -z "$src" ] || [ "$src" = 6.1 ] || name=$kernel-$src
		if [ -n "$ksrc" ]; then
			name=ksrc-$(basename "$(cd "$ksrc" && pwd)" | tr -c 'A-Za-z0-9._\n-' _)
			[ "$kernel" = vanilla ] || name+=-$kernel
		fi
		[ ${#patches[@]} -eq 0 ] || name=$name+patches
	else
		name=custom
	fi
}
run_name
out=${out:-$TOP/build/vm/$name}

# The packages first: a user who cannot install them is told the apt-get
# command, and nothing is made.  Then the cache and the results directory,
# before any other work: one that cannot be written is the host's failure
# (exit 3), not a case's.
"$TOOLS/deps.sh" || die "missing packages"
cache_ready
err=$(mkdir -p -- "$out" 2>&1) || die "cannot make the results directory $out: ${err##*: }"
[ -w "$out" ] || die "cannot write to the results directory $out (read-only?)"

# Installed is not on PATH: said before anything is fetched or built.
[ "$prepare" = 1 ] || need_cmd qemu-system-x86_64
# Downloads of runs that were killed (SIGKILL leaves them) go now.
stale_remove "$(cache_dir)/debs/.download."

# The runner does not depend on the kernel: one build serves every VM.  A
# --kver of another release is no version of the default source its
# kselftest.h comes from (KVER= also overrides one make passed down).
runner_kver=$kver
[ -z "$dist$src" ] || runner_kver=
make -s -C "$TOP" KVER="$runner_kver" OUTPUT="$TOP/build" all >&2 ||
	die "could not build the runner"
runner=$TOP/build/module_async

# The suite's arguments, checked by the runner itself before a kernel is
# fetched or booted: a bad one is its usage error (exit 2); --help and the
# lists are answered here, with no VM.
for arg in "${suite_args[@]}"; do
	case $arg in
	-h | --help | -l | --list | --list-modules) exec "$runner" "${suite_args[@]}" ;;
	esac
done
"$runner" --list "${suite_args[@]}" >/dev/null || exit 2

# One run per results directory: a second run on the same kernel would mix
# its boots with the first's.  The lock (fd 7, inherited by vm-run, not
# by its QEMU) goes with it.
{ exec 7>"$out/.lock"; } 2>/dev/null || die "cannot write to the results directory $out"
flock -n 7 || die "another run is using $out: wait for it to end, or give --out"

# kernel_entry: the kernel's entry in $entry (fetched, built or made of the
# user's own files).
kernel_entry()
{
	if [ "$kernel" = stock ]; then
		entry=$("$TOOLS/kernel/fetch-kernel.sh" ${dist:+--dist "$dist"} \
			${kver:+--kver "$kver"} | tail -n 1) ||
			die "could not fetch the stock kernel"
		log "kdir: $(cat "$entry/kdir.how" 2>/dev/null || echo "$entry/kdir")"
	elif is_source_variant "$kernel"; then
		entry=$("$TOOLS/kernel/build-kernel.sh" --variant "$kernel" ${src:+--src "$src"} \
			${dist:+--dist "$dist"} ${kver:+--kver "$kver"} ${ksrc:+--ksrc "$ksrc"} \
			"${patches[@]}" | tail -n 1) || die "could not build the $kernel kernel"
	else
		entry=$(custom_entry "$TOP/build/vm/custom/kernel")
	fi
}

# entry_loads_ok: what the run loads from the cache (the kernel image, the
# kernel's modules the cases load and those they need) holds what the
# entry's checksums say.
entry_loads_ok()
{
	local mods mod files=(vmlinuz)

	mods=lib/modules/$(cat "$entry/krel")
	for mod in "${kernel_modules[@]}"; do
		mapfile -t -O "${#files[@]}" files < <(module_files "$entry/$mods" "$mod" |
			sed "s,^,$mods/,")
	done
	entry_verify "$entry" "${files[@]}"
}

mapfile -t kernel_modules < <("$runner" --list-modules)
kernel_entry
# A kernel in the cache is used only as its checksums say; one that is not
# is made again (never used), once.
if [ "$name" != custom ] && ! entry_loads_ok; then
	log "$entry is damaged: making it again"
	rm -f "$entry/.complete"
	kernel_entry
	entry_loads_ok || die "$entry is damaged again, just after it was made"
fi

# boot_vm: boot the initramfs (vm-run), or with --prepare say what
# would be booted.
boot_vm()
{
	if [ "$prepare" = 1 ]; then
		printf '%s %s\n' name "$name" entry "$entry" \
			initrd "$out/initramfs.cpio.gz" cases "$out/cases"
		exit 0
	fi
	exec "$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$out/initramfs.cpio.gz" \
		--out "$out" --timeout "$timeout" --cases "$out/cases" -- "${suite_args[@]}"
}
stage=$out/suite
krel=$(cat "$entry/krel")
log "kernel $name: $krel ($entry)"
if [ "$via" = run_kselftest ]; then
	# The install the kselftest way, from a kernel tree holding the suite
	# (the series applied to the source the kernel is built from: --src's,
	# else fetch-source.sh's); the runner's bound is settings' timeout, and
	# a boot must outlast it.
	ksft_source=$("$TOOLS/kernel/fetch-source.sh" ${src:+--series "$src"} | tail -n 1) ||
		die "could not fetch the source for the kselftest tree"
	install=$("$TOOLS/vm/ksft-install.sh" --source "$ksft_source" --tree "$out/ksft-tree" \
		--install "$out/kselftest" --kdir "$entry/kdir" | tail -n 1) ||
		die "could not make the kselftest install"
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --kselftest "$install" \
		--out "$out/initramfs.cpio.gz" >&2 || die "could not build the initramfs"
	ksft_timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$install/module_async/settings")
	ksft_timeout=${ksft_timeout:-45}	# runner.sh's default
	[ "$timeout" -ge $((ksft_timeout + 120)) ] || timeout=$((ksft_timeout + 120))
	# The cases, for naming the one a dead guest was running.
	"$runner" --list >"$out/cases" || die "could not list the cases"
	boot_vm
fi

# Kbuild writes its output next to the sources of an external module, so
# each kernel gets its own copy of modules/ (kbuild's files in it kept).
# Built from the same sources against the same cache entry (its stamp)
# with the same tools as last time: kbuild is not even asked.
build=$out/modules-build
mods_key=''
if [ -f "$entry/.complete" ]; then
	mods_key=$(printf 'kdir %s\n' "$(readlink -f "$entry/kdir")"
		   cat "$entry/.complete"
		   find "$TOP/modules" "$TOOLS/compat/modules.h" -maxdepth 1 -type f \
			\( -name '*.[ch]' -o -name Makefile \) \
			-print0 | LC_ALL=C sort -z | xargs -0 sha256sum
		   tools_key make gcc)
fi
shopt -s nullglob
if [ -n "$mods_key" ] && step_current "$build.inputs" "$mods_key" "$build"/*.ko; then
	log "test modules up to date ($build.inputs)"
else
	rm -f "$build.inputs"
	rsync -a --delete --exclude '*.ko' --exclude '*.o' --exclude '*.mod' \
		--exclude '*.mod.c' --exclude '.*.cmd' --exclude Module.symvers \
		--exclude modules.order "$TOP/modules/" "$build/"
	make -s -C "$build" KDIR="$entry/kdir" KCFLAGS="${KCFLAGS:+$KCFLAGS }$COMPAT_KCFLAGS" >&2 ||
		die "could not build the test modules against $entry/kdir"
	[ -z "$mods_key" ] || step_done "$build.inputs" "$mods_key" "$build"/*.ko
fi
shopt -u nullglob

rm -rf "$stage"
mkdir -p "$stage/modules"
cp "$TOP/module_async.sh" "$runner" "$TOP/config" "$stage/"
[ -e "$TOP/settings" ] && cp "$TOP/settings" "$stage/"
cp "$build"/*.ko "$stage/modules/"

"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$stage" \
	--out "$out/initramfs.cpio.gz" >&2 || die "could not build the initramfs"

"$runner" --list >"$out/cases" || die "could not list the cases"
boot_vm
