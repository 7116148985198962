#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - the suite in a QEMU guest (make vm).  Exit status: the suite's (0, 1
# a case failed, 4 all skipped); 2 bad usage, before any work; 3 a failure of
# the host or of the VM, never 1.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

# A command failing unchecked exits 3 (not 1: a case failed), saying which;
# a subshell leaves the saying to its parent.
errors_exit()
{
	[ "$BASH_SUBSHELL" -gt 0 ] ||
		printf '%s: error: line %s: %s: exit %s\n' "$PROG" "$2" "$3" "$1" >&2
	exit "$EXIT_INFRA"
}
set -E
trap 'errors_exit "$?" "$LINENO" "$BASH_COMMAND"' ERR

usage()
{
	cat <<EOF
usage: $PROG [options] [-- suite arguments]

Runs the suite in a QEMU guest: its KTAP to stdout and OUT/results.ktap,
the guest's console to OUT/console.log.

  --kernel KERNEL    stock (Debian's: the default without --patch, --src or
                     --ksrc), built from source: $SOURCE_VARIANTS;
                     or a bzImage FILE
  --kdir DIR         for --kernel FILE: its build tree or its headers
  --moddir DIR       for --kernel FILE: its lib/modules/<release>/ (default:
                     the build tree's, or the one beside the headers)
  --patch FILE       a patch on a kernel built from source (repeatable)
  --src X.Y          build Debian's linux-source-X.Y (default 6.1):
                     $(deb_series | paste -sd' ')
  --ksrc DIR         build your own kernel tree DIR (only read) instead
  --dist RELEASE     the stock kernel's or --src's Debian release (default
                     \$DIST, else bookworm): $(deb_releases | paste -sd' ')
  --kver VERSION     the Debian package version of the kernel or source
  --allow-deadlock   run the cases that can wedge the kernel for good
  --via WAY          direct (module_async.sh, the default) or run_kselftest
  --out DIR          the results (default: build/vm/NAME, NAME the kernel's):
                     no file of yours by a name the run writes
  --prepare          make the image, boot nothing; print its name, entry, initrd, cases
  -h, --help         this text

Suite arguments after -- go to module_async.sh in the guest (see its
--help), with run_kselftest in KSELFTEST_MODULE_ASYNC_SH_ARGS. The test
modules are built with \$KCFLAGS, and \$MA_STORM_NR copies of ma_storm_N
(8 to 64, default 8: the suite's --storm N needs N).
EOF
}

kernel='' dist=${DIST:-} src='' ksrc='' kver='' kdir='' moddir='' via=direct out=''
patches=() timeout=300 prepare=0 suite_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel | --dist | --src | --ksrc | --kver | --kdir | --moddir | --via | --out)
		need_arg "$1" $#; printf -v "${1#--}" %s "$2"; shift ;;
	--patch)
		[ -r "${2:-}" ] || usage_error "cannot read patch '${2:-}'"
		grep -q '^+++ ' "$2" || usage_error "$2 is no patch (it has no +++ line)"
		patches+=(--patch "$(cd "$(dirname "$2")" && pwd)/${2##*/}")
		shift
		;;
	--allow-deadlock) suite_args+=(--allow-deadlock) ;;
	--prepare) prepare=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; suite_args+=("$@"); break ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done

for arg in "${suite_args[@]}"; do
	[[ $arg != *$'\n'* ]] || usage_error "a suite argument cannot hold a newline"
done
if [ -n "$out" ]; then
	why=$(path_problem "$(realpath -m -- "$out")")
	[ -z "$why" ] || usage_error "--out $out: $why"
fi
# What the run writes in --out DIR replaces what is there under its names:
# in a DIR no run made (no .lock), none may be a user's.
if [ -n "$out" ] && [ -d "$out" ] && [ ! -e "$out/.lock" ]; then
	for f in suite modules-build kselftest ksft-tree initramfs.cpio.gz cases results.ktap \
		 console.log serial1.log qemu.log guest.state boot-1.ktap; do
		if [ -e "$out/$f" ] || [ -L "$out/$f" ]; then
			usage_error "--out $out holds $f, which no run of $PROG made (there" \
				"is no .lock): a run would replace it; give another directory"
		fi
	done
fi
[[ $via == @(direct|run_kselftest) ]] ||
	usage_error "--via wants direct or run_kselftest, not '$via'"
[ -z "$kver" ] || check_debversion "$kver"
[ -z "$dist" ] || check_release "$dist"
[ -z "$src" ] || check_series "$src"
if [ -z "$kernel" ]; then
	kernel=stock
	[ ${#patches[@]} -eq 0 ] && [ -z "$src$ksrc" ] || kernel=vanilla
fi
if ! is_source_variant "$kernel"; then
	for opt in ${patches[0]:+--patch} ${src:+--src} ${ksrc:+--ksrc}; do
		usage_error "$opt goes with a kernel built from source ($SOURCE_VARIANTS)," \
			"not '$kernel'"
	done
	[ "$kernel" = stock ] || [ -f "$kernel" ] || [[ $kernel == */* ]] ||
		usage_error "unknown kernel '$kernel' (stock, $SOURCE_VARIANTS or a file)"
	[ "$kernel" = stock ] || [ -f "$kernel" ] || usage_error "no such kernel image: $kernel"
	[ ! -f "$kernel" ] || [ "$(head -c $((0x206)) -- "$kernel" | tail -c 4)" = HdrS ] ||
		usage_error "$kernel is no bzImage (no boot protocol header:" \
			"\"HdrS\" at offset 0x202)"
fi
if ! [[ ${MA_STORM_NR:-8} =~ ^[1-9][0-9]?$ ]] || [ "${MA_STORM_NR:-8}" -lt 8 ] ||
   [ "${MA_STORM_NR:-8}" -gt 64 ]; then
	usage_error "MA_STORM_NR=$MA_STORM_NR: 8 to 64"
fi
if [ -n "$ksrc" ]; then
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
	# The release as uname and vermagic say it (Debian's headers: 6.1.192
	# in kernel.release, 6.1.0-57-amd64 in utsrelease.h).
	krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$kdir/include/generated/utsrelease.h" 2>/dev/null) || true
	[[ -f $kdir/Makefile && -n $krel ]] ||
		usage_error "$kdir is neither a configured kernel build tree nor kernel headers"
	why=$(path_problem "$(readlink -f "$kdir")")
	[ -z "$why" ] || usage_error "--kdir $kdir: $why"
	[ -z "$moddir" ] || [ -d "$moddir/kernel" ] ||
		usage_error "$moddir is no module tree (no kernel/ in it)"
	# Headers' modules: the lib/modules/KREL/ KDIR is the "build" link of, or
	# the one beside ROOT/usr/src/linux-headers-KREL (merged /usr: ROOT/usr/lib).
	if [ -z "$moddir" ] && [ ! -f "$kdir/modules.order" ]; then
		root=$(cd "$kdir/../../.." && pwd)
		for d in "$(dirname "$kdir")" "$root"/{,usr/}lib/modules/"$krel"; do
			[ "${d##*/}" != "$krel" ] || [ ! -d "$d/kernel" ] || moddir=${moddir:-$d}
		done
		[ -n "$moddir" ] ||
			usage_error "$kdir holds headers only and no lib/modules/<release>/ is" \
				"beside them: name the kernel's module tree with --moddir (MODDIR=)"
	fi
fi

# custom_entry DIR KREL: the user's kernel as an entry in DIR: a build tree's
# modules installed, else --moddir's linked (nothing written there).
custom_entry()
{
	local dir=$1 krel=$2 mods=$1/lib/modules/$2 f

	rm -rf "$dir"
	mkdir -p "$mods"
	ln -s "$(readlink -f "$kernel")" "$dir/vmlinuz"
	ln -s "$(readlink -f "$kdir")" "$dir/kdir"
	echo "$krel" >"$dir/krel"
	if [ -z "$moddir" ]; then
		make -s -C "$kdir" modules_install INSTALL_MOD_PATH="$dir" >&2 ||
			die "could not install the modules of $kdir"
		return
	fi
	for f in "$moddir"/*; do
		case ${f##*/} in
		build | source | modules.*) ;;
		*) ln -s "$(readlink -f "$f")" "$mods/${f##*/}" ;;
		esac
	done
	cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$mods/" 2>/dev/null || true
	depmod -b "$dir" "$krel" || die "depmod failed on the modules in $moddir"
	log "modules of $krel from $moddir"
}

# kernel_entry: the kernel's entry, fetched, built or made, printed.
kernel_entry()
{
	local entry

	if [ "$kernel" = stock ]; then
		entry=$("$TOOLS/kernel/fetch-kernel.sh" ${dist:+--dist "$dist"} \
			${kver:+--kver "$kver"} | tail -n 1) ||
			die "could not fetch the stock kernel"
	elif is_source_variant "$kernel"; then
		entry=$("$TOOLS/kernel/build-kernel.sh" --variant "$kernel" ${src:+--src "$src"} \
			${dist:+--dist "$dist"} ${kver:+--kver "$kver"} ${ksrc:+--ksrc "$ksrc"} \
			"${patches[@]}" | tail -n 1) || die "could not build the $kernel kernel"
	else
		entry=$TOP/build/vm/custom/kernel
		custom_entry "$entry" "$krel"
	fi
	echo "$entry"
}

# entry_loads_ok ENTRY: what a run loads of ENTRY matches its checksums.
entry_loads_ok()
{
	local mods mod files=(vmlinuz)

	mods=lib/modules/$(cat "$1/krel")
	for mod in "${kernel_modules[@]}"; do
		mapfile -t -O "${#files[@]}" files < <(module_files "$1/$mods" "$mod" |
			sed "s,^,$mods/,")
	done
	entry_verify "$1" "${files[@]}"
}

# build_modules ENTRY DIR: the test modules built against ENTRY into DIR.
build_modules()
{
	local mod

	# No module of before survives a build that built none (modules/Makefile
	# only warns where KDIR is no build tree): each is there, new, or none.
	rm -rf "$2"
	mkdir -p "$2"
	cp -p "$TOP"/modules/{*.[ch],Makefile} "$2/"
	make -s -j"$(nproc)" -C "$2" KDIR="$1/kdir" \
		KCFLAGS="${KCFLAGS:+$KCFLAGS }$COMPAT_KCFLAGS" >&2 ||
		die "could not build the test modules against $1/kdir"
	for mod in $(make -s --no-print-directory -C "$2" list); do
		[ -f "$2/$mod.ko" ] || die "no $mod.ko built against $1/kdir (see above)"
	done
}

# direct_suite ENTRY: the suite installed in OUT/suite, printed.  Its test
# modules for a cached kernel come from a cache entry of their own, keyed by
# that kernel's entry and their sources, their checksums verified: every run
# on one kernel (the matrix, the deadlock runs, a fresh clone's) builds once.
direct_suite()
{
	local entry=$1 build=$out/modules-build key ko kos

	if [ -f "$entry/.complete" ]; then
		key=$(printf 'kdir %s\nkcflags %s\nstorm %s\n' "$(readlink -f "$entry/kdir")" \
			"${KCFLAGS:-}" "${MA_STORM_NR:-8}"
		      cat "$entry/.complete"
		      # Named from the clone's top: every clone's runs share it.
		      cd "$TOP" && files_key modules/{*.[ch],Makefile} tools/compat/modules.h
		      tools_key make gcc)
		ko=$(cache_dir)/modules/$(printf '%s' "$key" | sha256sum | cut -c1-16)
		entry_lock "$ko"
		if entry_valid "$ko" "$key" &&
		   mapfile -t kos < <(cd "$ko" && printf '%s\n' ma_*.ko) &&
		   entry_verify "$ko" "${kos[@]}"; then
			log "test modules cached ($ko)"
		else
			[ ! -e "$ko" ] || log "${ko##*/}: test modules made again"
			entry_remove "$ko"
			entry_tmp "$ko"
			build_modules "$entry" "$build"
			cp "$build"/*.ko "$ENTRY_TMP/"
			(cd "$ENTRY_TMP" && entry_sum ma_*.ko)
			entry_commit "$ko" "$key"
		fi
	else
		build_modules "$entry" "$build"
		ko=$build
	fi
	rm -rf "$out/suite"
	mkdir -p "$out/suite/modules"
	cp "$TOP/module_async.sh" "$runner" "$TOP/config" "$TOP/settings" "$out/suite/"
	cp "$ko"/*.ko "$out/suite/modules/"
	echo "$out/suite"
}

# The kernel's name in build/vm/.
name=$kernel
if [ "$kernel" = stock ]; then
	name=stock${dist:+-$dist}
elif [ -n "$ksrc" ]; then
	name=ksrc-$(basename "$(cd "$ksrc" && pwd)" | tr -c 'A-Za-z0-9._\n-' _)
	[ "$kernel" = vanilla ] || name+=-$kernel
elif is_source_variant "$kernel"; then
	# 6.1, the default source, keeps the names it had before --src.
	[ -z "$src" ] || [ "$src" = 6.1 ] || name=$kernel-$src
else
	name=custom
fi
[ ${#patches[@]} -eq 0 ] || name+=+patches
out=${out:-$TOP/build/vm/$name}

err=$(mkdir -p -- "$out" 2>&1) || die "cannot make the results directory $out: ${err##*: }"
[ -w "$out" ] || die "cannot write to the results directory $out (read-only?)"
# One run per results directory: the lock (fd 7) goes with vm-run.
{ exec 7>"$out/.lock"; } 2>/dev/null || die "cannot write to the results directory $out"
flock -n 7 || die "another run is using $out: wait for it to end, or give --out"
# An earlier run's results go first: a run that fails before the VM leaves none
# to be taken for its own.
rm -f -- "$out"/{results.ktap,console.log,serial1.log,qemu.log,guest.state} "$out"/boot-*.ktap
"$TOOLS/deps.sh" || die "missing packages"
cache_ready
[ "$prepare" = 1 ] || need_cmd qemu-system-x86_64
stale_remove "$(cache_dir)/debs/.download."

# The runner, one for every kernel: its kselftest.h from the default
# source, whose version a --kver of another release is not.
runner_kver=$kver
[ -z "$dist$src" ] || runner_kver=
make -s -C "$TOP" KVER="$runner_kver" OUTPUT="$TOP/build" all >&2 ||
	die "could not build the runner"
runner=$TOP/build/module_async
# It checks the suite's arguments, and answers --help and the lists, here.
for arg in "${suite_args[@]}"; do
	case $arg in
	-h | --help | -l | --list | --list-modules) exec "$runner" "${suite_args[@]}" ;;
	esac
done
# A usage error is its exit 1 (kselftest's KSFT_FAIL) with its usage, ours
# exit 2; any other failure is a broken runner.
rc=0
err=$("$runner" --list "${suite_args[@]}" 2>&1 >/dev/null) || rc=$?
[ -z "$err" ] || printf '%s\n' "$err" >&2
[ "$rc" -ne 1 ] || [[ $err != *"Usage: "* ]] || exit 2
[ "$rc" -eq 0 ] || die "$runner --list failed (exit $rc): a runner broken (make -B)?"
mapfile -t kernel_modules < <("$runner" --list-modules)


# A cached kernel is used only as its checksums say, else made again, once.
entry=$(kernel_entry) || exit
if [ "$name" != custom ] && ! entry_loads_ok "$entry"; then
	log "$entry is damaged: making it again"
	rm -f "$entry/.complete"
	entry=$(kernel_entry) || exit
	entry_loads_ok "$entry" || die "$entry is damaged again, just after it was made"
fi
log "kernel $name: $(cat "$entry/krel") ($entry)"

if [ "$via" = run_kselftest ]; then
	source=$("$TOOLS/kernel/fetch-source.sh" ${src:+--series "$src"} | tail -n 1) ||
		die "could not fetch the source for the kselftest tree"
	suite=$("$TOOLS/vm/ksft-install.sh" --source "$source" --tree "$out/ksft-tree" \
		--install "$out/kselftest" --kdir "$entry/kdir" | tail -n 1) ||
		die "could not make the kselftest install"
	# Its runner's bound is settings' timeout (runner.sh's default 45).
	bound=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$suite/module_async/settings")
	bound=$((${bound:-45} + 120))
	[ "$timeout" -ge "$bound" ] || timeout=$bound
else
	suite=$(direct_suite "$entry") || exit
fi
"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$suite" \
	--out "$out/initramfs.cpio.gz" >&2 || die "could not build the initramfs"
# The cases, for vm-run to name the one a dead guest was running.
"$runner" --list >"$out/cases" || die "could not list the cases"

if [ "$prepare" = 1 ]; then
	printf '%s %s\n' name "$name" entry "$entry" \
		initrd "$out/initramfs.cpio.gz" cases "$out/cases"
	exit 0
fi
exec "$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$out/initramfs.cpio.gz" \
	--out "$out" --timeout "$timeout" --cases "$out/cases" -- "${suite_args[@]}"
