#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of the VM tooling: fetch-kernel.sh, fetch-source.sh,
# mkinitramfs.sh, guest-init.sh and vm-run (the KTAP reader
# they use has its own tests, tools/ktap/test-ktap.sh).  They use the real
# cache for the stock kernel (fetching it if needed) and a throw-away cache
# for the tests that corrupt entries; the suite booted in the VM is a stand-in
# written here, so these tests do not depend on the runner or the test
# modules.  Everything module-related runs in the VM under TCG.
#
# Prints one line per check and "N passed, N failed"; exits 1 if any failed.
# About 2 minutes on a warm cache (a dozen TCG boots); with
# TMPDIR on a tmpfs (e.g. TMPDIR=/dev/shm) removing the throw-away cache
# does not wait for a busy disk.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"
readonly KTAP=$TOOLS/ktap/ktap

usage()
{
	cat <<EOF
Usage: $PROG [--full] [--keep]

Test the VM tooling in tools/ on this host (needs apt, QEMU, a compiler).

  --full   also boot the bzImage (not its PVH entry): 15 s more
  --keep   keep the temporary directory and say where it is
  --help   show this help
EOF
}

keep=0 full=0
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--full) full=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done

need_cmd make gcc cpio gzip qemu-system-x86_64

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-tools.XXXXXX")
busy=()	# the busy loops of the stand-in's boot on a busy host
cleanup()
{
	[ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true
	if [ "$keep" = 1 ]; then
		log "kept $tmp"
	else
		chmod -R u+w "$tmp" 2>/dev/null || true
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

section()
{
	log "$1 (${SECONDS} s)"
}
# not_ok WHAT [DETAIL...]: a failed check, with its details indented.
not_ok()
{
	fail "$1"
	shift
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}
# check NAME CMD...: CMD succeeds.
check()
{
	local name=$1

	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		pass "$name"
	else
		not_ok "$name" "failed: $*" "$(tail -n 5 "$tmp/check.out")"
	fi
}
# check_rc NAME RC CMD...: CMD exits with RC (its output in $tmp/rc.out,
# $tmp/rc.err).
check_rc()
{
	local name=$1 want=$2 got=0

	shift 2
	"$@" >"$tmp/rc.out" 2>"$tmp/rc.err" || got=$?
	if [ "$got" = "$want" ]; then
		pass "$name"
	else
		not_ok "$name" "exit $got, want $want: $*" "$(tail -n 5 "$tmp/rc.err")"
	fi
}
# An apt-get that records being called, to prove nothing is downloaded.
mkdir -p "$tmp/stub"
cat >"$tmp/stub/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/apt-get.calls"
exit 1
EOF
chmod +x "$tmp/stub/apt-get"
no_download()
{
	PATH="$tmp/stub:$PATH" "$@"
}
# An apt-cache that records being called and fails: apt's answers are kept.
mkdir -p "$tmp/stub-apt"
cat >"$tmp/stub-apt/apt-cache" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/apt-cache.calls"
exit 1
EOF
chmod +x "$tmp/stub-apt/apt-cache"
no_apt_cache()
{
	PATH="$tmp/stub-apt:$PATH" "$@"
}

# ---- usage ----------------------------------------------------------------
section "usage"

for tool in kernel/fetch-kernel.sh kernel/fetch-source.sh vm/mkinitramfs.sh vm/vm-run \
	    tests/test-tools.sh; do
	check_rc "$tool --help exits 0" 0 "$TOOLS/$tool" --help
	grep -q '^Usage:' "$tmp/rc.out" || not_ok "$tool --help prints usage on stdout"
	check_rc "$tool --bogus exits 2" 2 "$TOOLS/$tool" --bogus
	grep -q '^Usage:' "$tmp/rc.err" || not_ok "$tool --bogus prints usage on stderr"
done
check_rc "vm-run --accel bad exits 2" 2 "$TOOLS/vm/vm-run" --kernel x --initrd y --out z --accel bad
check_rc "vm-run --timeout 0 exits 2" 2 "$TOOLS/vm/vm-run" --kernel x --initrd y --out z --timeout 0
check_rc "fetch-kernel.sh --kver without value exits 2" 2 "$TOOLS/kernel/fetch-kernel.sh" --kver
check_rc "mkinitramfs.sh without --out exits 2" 2 "$TOOLS/vm/mkinitramfs.sh" --kernel x --suite y

# ---- Debian's package layouts, by generation ------------------------------
section "package names and headers Makefiles"

for name in linux-image-5.10.0-46-amd64 linux-image-6.1.0-57-amd64 \
	    linux-image-6.12.118+deb13-amd64 linux-image-7.2.13+deb14-amd64; do
	verify "an image of its generation: $name" grep -qE "$DEB_IMAGE_RE" <<<"$name"
done
for name in linux-image-amd64 linux-image-6.1.0-57-amd64-unsigned \
	    linux-image-6.1.0-57-cloud-amd64 linux-image-7.2.13+deb14-rt-amd64 \
	    linux-image-6.12.118+deb13-amd64-dbg; do
	verify "not a plain amd64 image: $name" grep -vqE "$DEB_IMAGE_RE" <<<"$name"
done

# headers_rewrite NAME HEADERS COMMON MAKEFILE-LINES...: the Makefile rewritten
# into $tmp/hdr/HEADERS/Makefile, beside $tmp/hdr/COMMON/Makefile, which
# prints its KBUILD_OUTPUT: make -f on it says where the build goes.
headers_rewrite()
{
	local name=$1 h=$tmp/hdr/$2 c=$tmp/hdr/$3 got

	shift 3
	mkdir -p "$h" "$c"
	# shellcheck disable=SC2016 # make expands it
	printf '%s\n' 'all:' '	@echo "common $(KBUILD_OUTPUT)"' >"$c/Makefile"
	printf '%s\n' "$@" | (headers_makefile "${h##*/}" "${c##*/}") >"$h/Makefile" ||
		{ not_ok "$name: rewritten"; return; }
	got=$(cd / && make -s -f "$h/Makefile") || got="make failed"
	if grep -q /usr/src "$h/Makefile"; then
		not_ok "$name: /usr/src left in it" "$(cat "$h/Makefile")"
	elif [ "$got" = "common ${KBUILD_OUT-}" ]; then
		pass "$name: includes the common headers beside it" \
			"${KBUILD_OUT:+(KBUILD_OUTPUT: its own directory)}"
	else
		not_ok "$name: make says '$got', want 'common ${KBUILD_OUT-}'" \
			"$(cat "$h/Makefile")"
	fi
}
KBUILD_OUT='' headers_rewrite "6.1's headers Makefile" linux-headers-6.1.0-57-amd64 \
	linux-headers-6.1.0-57-common "include /usr/src/linux-headers-6.1.0-57-common/Makefile"
KBUILD_OUT=$tmp/hdr/linux-headers-7.2.13+deb14-amd64 headers_rewrite \
	"7.2's headers Makefile" linux-headers-7.2.13+deb14-amd64 \
	linux-headers-7.2.13+deb14-common \
	"KBUILD_OUTPUT=/usr/src/linux-headers-7.2.13+deb14-amd64" \
	"include /usr/src/linux-headers-7.2.13+deb14-common/Makefile"
# shellcheck disable=SC2016 # bash -c gets its values as $1
for makefile in 'include /usr/src/c/Makefile\nCC = gcc-16' '# nothing'; do
	check_rc "a headers Makefile of no known form (or no include) exits 3: $makefile" 3 \
		bash -c '. "$1/lib.sh"; . "$1/debian.sh"; printf "$2\n" | headers_makefile h c' \
		_ "$TOOLS" "$makefile"
done

# ---- fetch-kernel.sh ------------------------------------------------------
section "fetch-kernel.sh"

log "fetching the stock kernel (downloads on a cold cache)"
entry=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1)
krel=$(cat "$entry/krel")
kver=${entry##*/}
stock=stock/$(basename "$(dirname "$entry")")	# stock/<release>
check_rc "fetch-kernel.sh again is a cache hit without apt-get" 0 \
	no_download "$TOOLS/kernel/fetch-kernel.sh"
[ "$(tail -n 1 "$tmp/rc.out")" = "$entry" ] || not_ok "cache hit prints the same entry"
[ ! -e "$tmp/apt-get.calls" ] || not_ok "cache hit called apt-get" "$(cat "$tmp/apt-get.calls")"
check_rc "fetch-kernel.sh a third time asks apt-cache nothing (its answers kept)" 0 \
	no_apt_cache "$TOOLS/kernel/fetch-kernel.sh"
[ ! -e "$tmp/apt-cache.calls" ] ||
	not_ok "a cache hit called apt-cache" "$(cat "$tmp/apt-cache.calls")"
check "entry has vmlinuz, krel, kdir, modules.dep" \
	test -f "$entry/vmlinuz" -a -f "$entry/kdir/Makefile" \
		-a -s "$entry/lib/modules/$krel/modules.dep"
# links_inside ENTRY: each link of its kernel build resolves inside it.
links_inside()
{
	local link target

	while IFS= read -r link; do
		target=$(readlink -f "$link") || { echo "$link dangles"; return 1; }
		case $target in
		"$1"/*) ;;
		*) echo "$link -> $target"; return 1 ;;
		esac
	done < <(find "$1/kdir/" "$1/usr/src" "$1/lib/modules" -type l)
}
check "entry's kernel build links resolve inside the entry" links_inside "$(readlink -f "$entry")"

mkdir -p "$tmp/hello"
cat >"$tmp/hello/ma_standin.c" <<'EOF'
/* Built against the entry's kdir; the stand-in suite's modprobe_extra loads it. */
#include <linux/module.h>

static int __init ma_standin_init(void)
{
	pr_info("ma_standin: loaded\n");
	return 0;
}
module_init(ma_standin_init);

static void __exit ma_standin_exit(void)
{
}
module_exit(ma_standin_exit);

MODULE_DESCRIPTION("module_async tools test module");
MODULE_LICENSE("GPL");
EOF
echo 'obj-m := ma_standin.o' >"$tmp/hello/Makefile"
check "a hello module builds against kdir" \
	make -C "$entry/kdir" KBUILD_EXTMOD="$tmp/hello" modules
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "the hello module's vermagic is $krel" \
	bash -c 'modinfo -F vermagic "$1" | grep -q "^$2 "' _ "$tmp/hello/ma_standin.ko" "$krel"

# Corrupted entries, in a throw-away cache seeded with the .debs (they are
# checked against apt's index, so no download is needed).
cache=$tmp/cache
mkdir -p "$cache/debs" "$cache/$stock/$kver/kdir" "$cache/$stock/$kver.tmp.leftover"
cp -l "${entry%/"$stock"/*}"/debs/*_"$kver"_*.deb "$cache/debs/" 2>/dev/null ||
	cp "${entry%/"$stock"/*}"/debs/*_"$kver"_*.deb "$cache/debs/"
echo junk >"$cache/$stock/$kver/.complete"
touch "$cache/$stock/$kver/stale"
check_rc "entry with a mismatched stamp is rebuilt from cached .debs" 0 \
	env MODULE_ASYNC_CACHE="$cache" PATH="$tmp/stub:$PATH" "$TOOLS/kernel/fetch-kernel.sh"
if [ -e "$cache/$stock/$kver/stale" ] || [ -e "$cache/$stock/$kver.tmp.leftover" ]; then
	not_ok "rebuilt entry is clean: no stale files, no leftover temporary directory"
fi
cmp -s "$entry/.complete" "$cache/$stock/$kver/.complete" ||
	not_ok "rebuilt entry's stamp matches the real cache's"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "what apt's answers resolved to is kept for the next run" \
	bash -c 'ls "$1"/apt-answers/fetch-kernel.* >/dev/null 2>&1' _ "$cache"
# A kept resolution never hides a damaged entry.
truncate -s 0 "$cache/$stock/$kver/krel"
check_rc "... and an entry damaged since is made again" 0 \
	env MODULE_ASYNC_CACHE="$cache" PATH="$tmp/stub:$PATH" "$TOOLS/kernel/fetch-kernel.sh"
check "... whole" cmp -s "$entry/krel" "$cache/$stock/$kver/krel"
[ ! -e "$tmp/apt-get.calls" ] || not_ok "rebuild from cached .debs called apt-get"

# An entry is valid only as its stamp and manifest say: each file there, its
# size.  entry_fault FAULT: make a small entry, do FAULT to it (shell code,
# $e the entry), then ask entry_valid with the entry's own stamp.
entry_fault()
{
	# shellcheck disable=SC2016 # bash -c gets its values as $1...
	bash -c '. "$1/lib.sh"; e=$2
		 entry_tmp "$e"; mkdir -p "$ENTRY_TMP/lib/m"
		 echo kernel >"$ENTRY_TMP/vmlinuz"; echo module >"$ENTRY_TMP/lib/m/a.ko"
		 entry_commit "$e" stamp; eval "$3"; entry_valid "$e" stamp' \
		_ "$TOOLS" "$tmp/entry.$RANDOM" "$1"
}
check "an entry as made is valid" entry_fault :
# shellcheck disable=SC2016 # the faults are code for entry_fault
check "an entry with a file added is valid" entry_fault 'echo x >"$e/new"'
# shellcheck disable=SC2016 # the faults are code for entry_fault
for fault in 'rm "$e/.complete"' 'truncate -s 3 "$e/lib/m/a.ko"' 'rm -r "$e/lib"' \
	'rm "$e/.manifest"' 'echo kernel2 >"$e/vmlinuz"'; do
	check_rc "an entry is not valid after: $fault" 1 entry_fault "$fault"
done
grep -q 'vmlinuz is missing or not its size (7 bytes)' "$tmp/rc.err" ||
	not_ok "an entry that is not intact: the file named" "$(cat "$tmp/rc.err")"
check_rc "a version apt does not know fails with 3" 3 \
	env MODULE_ASYNC_CACHE="$cache" "$TOOLS/kernel/fetch-kernel.sh" --kver 0.0.1-1
grep -q '0.0.1-1' "$tmp/rc.err" || not_ok "unknown version error names it"
mkdir -p "$tmp/noapt"
ln -sf /usr/bin/* /usr/sbin/* "$tmp/noapt/"
rm -f "$tmp/noapt/apt-get"
check_rc "no apt-get fails with 3" 3 \
	env MODULE_ASYNC_CACHE="$tmp/cold" PATH="$tmp/noapt" "$TOOLS/kernel/fetch-kernel.sh"
grep -q "'apt-get' is not installed" "$tmp/rc.err" || not_ok "no apt-get error names it"

# ---- fetch-source.sh ------------------------------------------------------
section "fetch-source.sh"

log "fetching the kernel source (downloads on a cold cache)"
check_rc "fetch-source.sh prints the source tree" 0 "$TOOLS/kernel/fetch-source.sh"
src=$(tail -n 1 "$tmp/rc.out")
check "source tree has kselftest.h and kernel/async.c" \
	test -f "$src/tools/testing/selftests/kselftest.h" -a -f "$src/kernel/async.c"
check_rc "fetch-source.sh --series 7.2 --kver 6.1.192-3 exits 2" 2 \
	"$TOOLS/kernel/fetch-source.sh" --series 7.2 --kver 6.1.192-3
check_rc "fetch-source.sh --series 9.9 (no release carries it) exits 2" 2 \
	"$TOOLS/kernel/fetch-source.sh" --series 9.9
# linux-source-7.2 comes from sid (a download on a cold cache).
check_rc "fetch-source.sh --series 7.2 prints sid's linux-source-7.2" 0 \
	"$TOOLS/kernel/fetch-source.sh" --series 7.2
check "the 7.2 source is a 7.2 entry" grep -qE '/source/7\.2\.[^/]*/linux-source-7\.2$' \
	"$tmp/rc.out"
check_rc "build-kernel.sh --src 7.2 on a 6.1 tree exits 3, naming the mismatch" 3 \
	"$TOOLS/kernel/build-kernel.sh" --variant patched --src 7.2 --source "$src"
grep -q 'not the --src 7.2 asked for' "$tmp/rc.err" ||
	not_ok "build-kernel.sh names the series mismatch"

# ---- mkinitramfs.sh -------------------------------------------------------
section "mkinitramfs.sh"

suite=$tmp/suite
mkdir -p "$suite/modules"
cp "$tmp/hello/ma_standin.ko" "$suite/modules/"
echo "timeout=60" >"$suite/settings"
# The stand-in runner knows only --list and --list-modules: run here, it
# gives vm-run the planned order of a scenario's cases (--cases), as
# vm.sh does with the runner it built, and mkinitramfs.sh the kernel's
# modules to pack; the stand-in suite runs it in the guest.
cat >"$suite/module_async" <<'EOF'
#!/bin/sh
# Stand-in runner: --list prints the cases of a scenario in run order,
# --list-modules the kernel's modules the default scenario loads.
if [ "${1:-}" = --list-modules ]; then
	printf '%s\n' null_blk kyber-iosched bfq
	exit 0
fi
[ "${1:-}" = --list ] || { echo "stand-in runner: --list only" >&2; exit 2; }
shift
case " $* " in
*" --scenario wedge "*) cases="ok_first wedge_exit ok_middle wedge_hang" ;;
*" --scenario die "*) cases="ok_first panic hang" ;;
*" --scenario repeat "*) cases="ok_first ok_second" ;;
*)
	cases="modprobe_null_blk configfs_loaded modprobe_extra"
	cases="$cases request_module_kyber guest_knobs"
	;;
esac
for c in $cases; do
	echo "$c safe"
done
EOF
cat >"$suite/module_async.sh" <<'EOF'
#!/bin/sh
# Stand-in for the suite: exercises what the real one needs from the VM.
rc=0

# --scenario NAME: cases that wedge the kernel (reported as the runner
# does: TIMEOUT, "# kernel wedged by", the rest not run) or kill the guest;
# with --case, only those cases, numbered from 1, as the runner does.
# --scenario repeat --then HOW: the cases twice and a drift check, as the
# runner's --repeat 2 plans them, but after the third result (every listed
# case reported) the guest panics, hangs, or the suite exits 0 (short).
scenario()
{
	dir=$(dirname "$0") wanted='' prev='' cases='' n=0 wedged='' failed=0 then=''

	for a in "$@"; do
		[ "$prev" != --case ] || wanted="$wanted $a"
		[ "$prev" != --then ] || then=$a
		prev=$a
	done
	for c in $("$dir/module_async" --list "$@" | cut -d' ' -f1); do
		case " ${wanted:-$c} " in *" $c "*) cases="$cases $c" ;; esac
	done
	set -- $cases
	echo "TAP version 13"
	if [ -n "$then" ]; then
		echo "1..$(($# * 2 + 1))"
		"$dir/kernel-identity"
		echo "ok 1 ok_first"
		echo "ok 2 ok_second"
		echo "ok 3 ok_first.2"
		case $then in
		panic) sleep 1; echo c >/proc/sysrq-trigger ;;
		short) exit 0 ;;
		esac
		exec sleep 600
	fi
	echo "1..$#"
	"$dir/kernel-identity"
	echo "# policy: standin"
	for c in "$@"; do
		n=$((n + 1))
		if [ -n "$wedged" ]; then
			echo "# $c: not run: kernel wedged by $wedged"
			continue
		fi
		case $c in
		ok_*)
			echo "# clock: $(date +%s)"
			echo "ok $n $c"
			;;
		wedge_*)
			# A while after ok_first: a restored guest's clock
			# must show it (it was saved before).
			[ "$c" != wedge_exit ] || sleep 2
			echo "# $c: the load is stuck in D state"
			echo "# $c: TIMEOUT after 1s"
			echo "not ok $n $c # TIMEOUT"
			echo "# $c: TIMEOUT the load did not return"
			echo "# kernel wedged by $c"
			wedged=$c failed=1
			;;
		panic)
			echo "# $c: crashing the kernel"
			# Let the serial line drain, as a real case's
			# earlier lines would have.
			sleep 1
			echo c >/proc/sysrq-trigger
			;;
		hang)
			echo "# $c: hanging"
			exec sleep 600
			;;
		esac
	done
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0"
	case $wedged in
	wedge_hang) exec sleep 600 ;;		# never exits: no end marker
	wedge_exit)
		# The driver's cleanup report, seconds after the runner's
		# last line (module_async.sh's under TCG): the host waits.
		sleep 4
		echo "# cleanup: the async job of ma_standin is stuck"
		sleep 600 & exit 1	# what it left holds stdout
		;;
	esac
	exit $failed
}
case " $* " in
*" --scenario "*) scenario "$@" ;;
esac
case ${1:-} in
--rc)
	rc=$2
	shift 2
	;;
esac
n=0
t()
{
	n=$((n + 1))
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "ok $n $name"; else echo "not ok $n $name"; fi
}
echo "TAP version 13"
echo "1..5"
[ "${1:-}" = --no-identity ] || "$(dirname "$0")/kernel-identity"
for a in "$@"; do echo "# arg: [$a]"; done
t modprobe_null_blk modprobe null_blk nr_devices=1
t configfs_loaded grep -q '^configfs ' /proc/modules
t modprobe_extra modprobe ma_standin
t request_module_kyber sh -c 'echo kyber >/sys/block/nullb0/queue/scheduler &&
	grep -q "\[kyber\]" /sys/block/nullb0/queue/scheduler'
t guest_knobs sh -c 'grep -qx 10 /proc/sys/kernel/hung_task_timeout_secs &&
	{ [ ! -e /sys/kernel/rcu_expedited ] || grep -qx 1 /sys/kernel/rcu_expedited; } &&
	grep -q "^2[[:space:]]" /proc/sys/kernel/printk'
# Kernel messages while guest-init copies long lines to the console (it
# reads them a byte at a time): the console must have each whole; a debug
# message the kernel would not print stays off it.
long=$(printf '%0400d' 0)
i=0
while [ $i -lt 20 ]; do
	echo "# long line $i: $long"
	i=$((i + 1))
done
i=0
while [ $i -lt 100 ]; do
	echo "<6>standin: kernel line $i of 100" >/dev/kmsg
	i=$((i + 1))
done
echo "<7>standin: a debug line" >/dev/kmsg
echo "# $(dmesg --version)"
echo "# $(modprobe --version | head -n 1)"
echo "stand-in stderr" >&2
exit "$rc"
EOF
chmod +x "$suite/module_async.sh" "$suite/module_async"
# The stand-in names its kernel as the runner does, with the runner's code.
cat >"$tmp/kernel-identity.c" <<'EOF'
#include <stdio.h>

#include "diag.h"
#include "identity.h"

static void print_diag(const char *line)
{
	printf("# %s\n", line);
}

int main(void)
{
	diag_set_hook(print_diag);
	kernel_identity(KERNEL_NOTES);
	return 0;
}
EOF
gcc -static -O2 -Wall -I"$TOP/lib" -o "$suite/kernel-identity" "$tmp/kernel-identity.c" \
	"$TOP/lib/identity.c" "$TOP/lib/diag.c" ||
	die "could not build the stand-in's kernel-identity"

check_rc "mkinitramfs.sh builds an initramfs" 0 \
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$suite" --out "$tmp/initrd.gz"
# remade INPUT-CHANGE: mkinitramfs.sh, after INPUT-CHANGE (shell code), wrote
# the image again rather than keeping it.
remade()
{
	eval "$1"
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$suite" --out "$tmp/initrd.gz" \
		>"$tmp/rc.out" 2>"$tmp/rc.err" && grep -q 'wrote ' "$tmp/rc.err"
}
kept()
{
	! remade : && grep -q 'is up to date' "$tmp/rc.err"
}
# shellcheck disable=SC2016 # the changes are code for remade
{
check "mkinitramfs.sh again from the same inputs keeps the image" kept
check "... remakes it after a suite file changed" remade 'echo "# x" >>"$suite/settings"'
check "... and after it changed back" remade 'sed -i "/^# x$/d" "$suite/settings"'
check "... and when the image is not the one it wrote" remade 'touch "$tmp/initrd.gz"'
check "... and without its stamp" remade 'rm "$tmp/initrd.gz.inputs"'
}
# What the guest needs and its boots below do not show: dash, dmesg and
# modprobe are (the guest's sh runs kmod's modprobe, its dmesg is
# util-linux's), null_blk with configfs and the suite's modules are
# (modprobe_null_blk, configfs_loaded, modprobe_extra).
zcat "$tmp/initrd.gz" | (cd "$tmp" && mkdir -p root && cd root && cpio -id --quiet)
root=$tmp/root
missing=''
for f in init bin/busybox opt/module_async/module_async.sh opt/module_async/settings \
	 "lib/modules/$krel/kernel/block/kyber-iosched.ko" \
	 "lib/modules/$krel/kernel/block/bfq.ko"; do
	[ -e "$root/$f" ] || missing+=" $f"
done
for f in modprobe insmod rmmod lsmod depmod modinfo; do
	[ "$(readlink "$root/sbin/$f")" = /bin/kmod ] || missing+=" sbin/$f (kmod)"
done
check "initramfs has busybox, the suite, the kernel's modules and the kmod tools" \
	test -z "$missing"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "the test modules are packed once, without debug information" \
	bash -c '[ -L "$1/opt/module_async/modules" ] &&
		 ! readelf -S "$1/opt/module_async/modules/ma_standin.ko" | grep -q debug_info' \
		_ "$root"
kmod_bin=$("$TOOLS/vm/build-kmod.sh" 2>/dev/null) || kmod_bin=/nonexistent
check "the initramfs's kmod is build-kmod.sh's" cmp -s "$kmod_bin" "$root/bin/kmod"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "... static, with xz and zstd, without OpenSSL" \
	bash -c '! ldd "$1" >/dev/null 2>&1 &&
		 "$1" --version | grep -q "+ZSTD +XZ .*-LIBCRYPTO"' _ "$root/bin/kmod"
# A damaged kmod entry is built again, from the source it names.
kcache=$tmp/kcache
release=$(. /etc/os-release && echo "$VERSION_CODENAME")
mkdir -p "$kcache/kmod" "$kcache/apt"
cp -a "${kmod_bin%/*}" "$kcache/kmod/"
cp -a "$(cache_dir)/apt/$release-src" "$kcache/apt/"
kentry=$kcache/kmod/$(basename "${kmod_bin%/*}")
printf 'x' | dd of="$kentry/kmod" bs=1 seek=4096 conv=notrunc status=none
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "build-kmod.sh builds a damaged entry again" \
	bash -c '[ "$(MODULE_ASYNC_CACHE=$1 "$2" 2>/dev/null)" = "$3/kmod" ] &&
		 "$3/kmod" --version >/dev/null' _ "$kcache" "$TOOLS/vm/build-kmod.sh" "$kentry"
rm -rf "$kcache"
check_rc "mkinitramfs.sh again gives the same bytes" 0 \
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$suite" --out "$tmp/initrd2.gz"
cmp -s "$tmp/initrd.gz" "$tmp/initrd2.gz" || not_ok "initramfs is reproducible"

mkdir -p "$tmp/fake/lib/modules/0.0-fake"
echo 0.0-fake >"$tmp/fake/krel"
: >"$tmp/fake/lib/modules/0.0-fake/modules.dep"
check_rc "mkinitramfs.sh fails when the kernel lacks null_blk" 3 \
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$tmp/fake" --suite "$suite" --out "$tmp/bad.gz"
grep -q null_blk "$tmp/rc.err" || not_ok "missing module error names null_blk"
mkdir -p "$tmp/nosuite"
check_rc "mkinitramfs.sh fails without module_async.sh" 3 \
	"$TOOLS/vm/mkinitramfs.sh" --kernel "$entry" --suite "$tmp/nosuite" --out "$tmp/bad.gz"

# ---- vm-run ------------------------------------------------------------
section "vm-run"

cat >"$tmp/expected.ktap" <<EOF
TAP version 13
1..5
# arg: [--case]
# arg: [two words]
# arg: [x=1]
ok 1 modprobe_null_blk
ok 2 configfs_loaded
ok 3 modprobe_extra
ok 4 request_module_kyber
ok 5 guest_knobs
EOF
# On a busy host (two busy loops here) the guest's vCPUs lose the CPU at
# any moment: that is when a kernel message can break a line the console
# is printing, where the guest does not relay the kernel's messages.
for _ in 1 2; do
	timeout 120 bash -c 'while :; do :; done' &
	busy+=($!)
done
start=$(date +%s%N)
check_rc "vm-run boots the stand-in suite on a busy host: rc 0" 0 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out0" \
		--accel tcg -- --case "two words" x=1
boot_ms=$((($(date +%s%N) - start) / 1000000))
kill "${busy[@]}" 2>/dev/null || true
wait "${busy[@]}" 2>/dev/null || true
busy=()
grep -v -e '^# dmesg from' -e '^# kmod version' -e '^# long line' -e '^# kernel: ' "$tmp/rc.out" |
	cmp -s - "$tmp/expected.ktap" ||
	not_ok "vm-run prints the suite's KTAP" \
		"$(diff "$tmp/expected.ktap" "$tmp/rc.out" | head -n 10)"
cmp -s "$tmp/rc.out" "$tmp/out0/results.ktap" || not_ok "results.ktap is what vm-run printed"
check "the guest's dmesg is util-linux's" \
	grep -q '^# dmesg from util-linux' "$tmp/out0/results.ktap"
# A boot that saves no state has its arguments in its initramfs (the words
# above arrived whole): the guest asks for none, and the image is removed.
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "no state saved: the arguments in the initramfs, no READY, the image gone" \
	bash -c '! grep -q MODULE_ASYNC_READY "$1/serial1.log" && [ ! -e "$1/boot.initrd" ]' \
		_ "$tmp/out0"
check "the guest's sh runs kmod's modprobe" \
	grep -q '^# kmod version' "$tmp/out0/results.ktap"
check "console.log has the kernel log and the suite's stderr" \
	grep -q 'stand-in stderr' "$tmp/out0/console.log"
check "console.log shows null_blk loaded" grep -q 'null_blk: module loaded' "$tmp/out0/console.log"
# whole_lines: console.log has the stand-in's 20 long lines and its 100
# kernel lines, each a line of its own, and not its debug line.
whole_lines()
{
	local long lines kernel

	long=$(printf '%0400d' 0)
	tr -d '\r' <"$tmp/out0/console.log" >"$tmp/console"
	lines=$(grep -cE "^# long line [0-9]+: $long\$" "$tmp/console")
	kernel=$(grep -cE '^\[ *[0-9]+\.[0-9]+\] standin: kernel line [0-9]+ of 100$' \
		"$tmp/console")
	echo "whole long lines: $lines of 20, whole kernel lines: $kernel of 100"
	[ "$lines" = 20 ] && [ "$kernel" = 100 ] &&
		! grep -q 'standin: a debug line' "$tmp/console"
}
check "console.log: kernel messages during the suite never break its lines" whole_lines
log "boot to end marker under TCG on a busy host took" \
	"$((boot_ms / 1000)).$(printf '%03d' $((boot_ms % 1000))) s"

# A fresh cache: no KVM verdict and no unpacked kernel yet.
check_rc "vm-run passes on the suite's rc 1 (accel auto, fresh cache)" 1 \
	env MODULE_ASYNC_CACHE="$tmp/cache" "$TOOLS/vm/vm-run" --kernel "$entry" \
		--initrd "$tmp/initrd.gz" --out "$tmp/out1" -- --rc 1
grep -E 'under (TCG|KVM)' "$tmp/rc.err" | head -n 2 | sed 's/^/# /'
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	# shellcheck disable=SC2016 # bash -c gets its values as $1...
	check "accel auto remembered its KVM verdict" \
		bash -c 'grep -qxE "kvm|tcg" "$1"/kvm-verdict/*' _ "$tmp/cache"
fi
if [ "$full" = 1 ]; then
	check_rc "vm-run passes on the suite's rc 4 (bzImage boot)" 4 \
		"$TOOLS/vm/vm-run" --kernel "$entry/vmlinuz" --boot bzimage --accel tcg \
			--initrd "$tmp/initrd.gz" --out "$tmp/out4" -- --rc 4
fi
check_rc "vm-run watchdog: no end marker in 2 s exits 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out-timeout" \
		--accel tcg --timeout 2
if pgrep -f "$tmp/out-timeout" >/dev/null; then
	not_ok "no QEMU left behind after the watchdog"
fi

# ---- vm-run: a deadlock is a verdict -----------------------------------
section "vm-run: wedged kernels"

# Boot 1 wedges in wedge_exit, whose leftover holds the suite's stdout
# (guest-init must end the run anyway) and whose cleanup report comes
# seconds after the rest (the host must wait for it); boot 2, restored from the state boot
# 1 saved before its first case, runs the rest and wedges in wedge_hang,
# which never ends (no end marker: the host takes what arrived).
cat >"$tmp/wedge.want" <<'EOF'
TAP version 13
1..4
# policy: standin
# clock: S
ok 1 ok_first
# wedge_exit: the load is stuck in D state
# wedge_exit: TIMEOUT after 1s
not ok 2 wedge_exit # TIMEOUT
# wedge_exit: TIMEOUT the load did not return
# kernel wedged by wedge_exit
# cleanup: the async job of ma_standin is stuck
# resumed in a fresh VM (boot 2) after wedge_exit wedged the kernel
# boot 2: restored from the state saved before the first case (S s)
# boot 2 policy: standin
# clock: S
ok 3 ok_middle
# wedge_hang: the load is stuck in D state
# wedge_hang: TIMEOUT after 1s
not ok 4 wedge_hang # TIMEOUT
# wedge_hang: TIMEOUT the load did not return
# kernel wedged by wedge_hang
# Totals: pass:2 fail:2 xfail:0 xpass:0 skip:0 error:0
EOF
printf '%s\n' 'kernel standin standin' 'policy standin' 'status 1' 'ok_first ok' \
	'wedge_exit timeout' 'ok_middle ok' 'wedge_hang timeout' >"$tmp/wedge.verdicts"
watchdog=120
start=$SECONDS
"$suite/module_async" --list --scenario wedge >"$tmp/wedge.cases"
check_rc "vm-run resumes after wedges in fresh VMs: rc 1" 1 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out-wedge" \
		--accel tcg --timeout "$watchdog" --cases "$tmp/wedge.cases" -- --scenario wedge \
		--allow-deadlock
took=$((SECONDS - start))
# timeless DOC: DOC with its clocks and times as S, without its kernel lines
# (checked by vm-run).
timeless()
{
	sed -E '/^# kernel: /d; s/^# clock: [0-9]+$/# clock: S/; s/\([0-9]+\.[0-9]+ s\)$/(S s)/' \
		"$1"
}
timeless "$tmp/rc.out" | cmp -s - "$tmp/wedge.want" ||
	not_ok "one KTAP document: every case once, in order, with the resume notes" \
		"$(timeless "$tmp/rc.out" | diff "$tmp/wedge.want" -)"
check "the wedged boot 1's end marker arrived after its cleanup report" \
	grep -qE '^vm-run: boot 1: end \(rc=1\)' "$tmp/rc.err"
check "a boot that saves its state asks for its arguments: READY" \
	grep -q MODULE_ASYNC_READY "$tmp/out-wedge/serial1.log"
check "boot 2 was restored, not booted" \
	grep -qE '^vm-run: boot 2: restored: the guest waits for its arguments after' \
		"$tmp/rc.err"
# clock_gap DOC: seconds between the guest's clocks at ok_first (boot 1)
# and ok_middle (boot 2, restored): at least wedge_exit's 2.
clock_gap()
{
	local clocks

	mapfile -t clocks < <(sed -n 's/^# clock: //p' "$1")
	echo "clocks ${clocks[*]}"
	[ ${#clocks[@]} = 2 ] && [ $((clocks[1] - clocks[0])) -ge 2 ]
}
check "the restored guest's clock is the host's, not the saved one's" \
	clock_gap "$tmp/out-wedge/results.ktap"
[ ! -e "$tmp/out-wedge/guest.state" ] || not_ok "the saved state is removed at the end"
cmp -s "$tmp/rc.out" "$tmp/out-wedge/results.ktap" ||
	not_ok "results.ktap is what vm-run printed"
check "tools/expected/expected accepts the merged document" \
	"$TOOLS/expected/expected" --table "$tmp/wedge.verdicts" compare --status 1 standin \
		"$tmp/out-wedge/results.ktap"
[ "$took" -lt "$watchdog" ] ||
	not_ok "no boot waited for its watchdog after a wedge ($took s)"
check "each boot's KTAP is kept (boot-1.ktap, boot-2.ktap)" \
	test -s "$tmp/out-wedge/boot-2.ktap" -a ! -e "$tmp/out-wedge/boot-3.ktap"
[ "$(grep -ac 'MODULE_ASYNC_END rc=1' "$tmp/out-wedge/serial1.log")" = 1 ] ||
	not_ok "guest-init ends the run when a leftover holds the suite's stdout" \
		"$(grep -a MODULE_ASYNC "$tmp/out-wedge/serial1.log")"
check "vm-run logs the time to each verdict" \
	grep -qE '^vm-run: boot 2: [0-9.]+ s to verdict: not ok 2 wedge_hang' "$tmp/rc.err"
log "wedge scenario: 2 boots in $took s"

# The guest panics in "panic": the run ends there, an infrastructure
# failure, the panicking case named.
start=$SECONDS
"$suite/module_async" --list --scenario die >"$tmp/die.cases"
check_rc "vm-run: a guest that dies is an infrastructure failure: rc 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out-die" \
		--accel tcg --timeout 20 --cases "$tmp/die.cases" -- --scenario die
took=$((SECONDS - start))
died='^vm-run: error: boot 1: guest died: Kernel panic - not syncing: '
check "the error names the panic and the case" \
	grep -qE "$died.*, after 1 results of 3 planned \\(in panic\\)" "$tmp/rc.err"
check "the kernel's last lines are on stderr" \
	grep -qE '^\[ *[0-9.]+\] Kernel panic - not syncing' "$tmp/rc.err"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "no new VM after a guest died" \
	bash -c '! grep -q "boot 2" "$1"' _ "$tmp/rc.err"
# panic_is_error DOC: the panicking case is ERROR, the console's panic in
# the evidence before it.
panic_is_error()
{
	local crash='Kernel panic - not syncing: sysrq triggered crash' evidence

	evidence=$("$KTAP" diag panic "$1")
	[ "$("$KTAP" directive panic "$1")" = "ERROR guest died: $crash" ] &&
		grep -q "^# console: .*$crash" <<<"$evidence"
}
check "the panicking case is ERROR with the console's panic before it" \
	panic_is_error "$tmp/out-die/results.ktap"
log "die scenario: 1 boot in $took s"

# A document is whole, or the run is no pass: every listed case has its
# result after the third, but the plan (--repeat's) wants five.
"$suite/module_async" --list --scenario repeat >"$tmp/repeat.cases"
for how in panic short; do
	what="vm-run: the guest ends ($how) after every listed case but short of the plan"
	check_rc "$what: rc 3" 3 "$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" \
		--out "$tmp/out-$how" --accel tcg --timeout 60 --cases "$tmp/repeat.cases" -- \
		--scenario repeat --then "$how"
	grep -q 'after 3 results of 5 planned' "$tmp/rc.err" ||
		not_ok "the error says how much of the plan arrived ($how)" \
			"$(tail -n 3 "$tmp/rc.err")"
done

# run_then_kill OUT WHAT: vm-run on the repeat scenario (its guest hangs
# after the third result) in the background, with a results lock held on
# fd 7 as vm.sh holds it; once the third result arrived, the process whose
# command line matches WHAT (a regex) is killed with SIGKILL, by its pid.
# vm-run's exit status in $tmp/kill.rc, its stderr in $tmp/kill.err.
run_then_kill()
{
	local out=$1 what=$2 pid i victim=''

	bash -c 'exec 7>"$1.lock"; flock -n 7 || exit 99; shift; exec "$@"' _ "$out" \
		"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$out" \
		--accel tcg --timeout 120 --cases "$tmp/repeat.cases" -- --scenario repeat \
		--then hang >/dev/null 2>"$tmp/kill.err" &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		if grep -qs '^ok 3 ' "$out/serial1.boot.out"; then
			victim=$(pgrep -f "$what" | head -n 1) && break
		fi
		sleep 0.1
	done
	[ -z "$victim" ] || kill -KILL "$victim"
	wait "$pid" && echo 0 >"$tmp/kill.rc" || echo $? >"$tmp/kill.rc"
	[ -n "$victim" ]
}
check "QEMU killed by the host after the third result" \
	run_then_kill "$tmp/out-kill" "^qemu-system-x86_64 .*$tmp/out-kill/"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "vm-run: QEMU killed mid-run exits 3, saying the guest died" \
	bash -c '[ "$(cat "$1")" = 3 ] && grep -q "$3, after 3 results of 5" "$2"' \
		_ "$tmp/kill.rc" "$tmp/kill.err" "guest died: QEMU exited without the end marker"
check "vm-run killed (SIGKILL) after the third result" \
	run_then_kill "$tmp/out-guard" "vm-run .*--out $tmp/out-guard "
# no_qemu_of OUT: within 10 s, no QEMU of OUT runs and its lock is free.
no_qemu_of()
{
	local i

	for ((i = 0; i < 100; i++)); do
		pgrep -f "qemu-system-x86_64 .*$1/" >/dev/null || break
		sleep 0.1
	done
	flock -w 1 "$1.lock" true && ! pgrep -f "qemu-system-x86_64 .*$1/" >/dev/null
}
check "no QEMU outlives a killed vm-run, nor holds the results lock" \
	no_qemu_of "$tmp/out-guard"
# One that did (the check failed) is this test's to end.
for pid in $(pgrep -f "qemu-system-x86_64 .*$tmp/out-guard/"); do
	kill -KILL "$pid"
done

# The kernel booted must be the kernel meant: an entry whose build-id names
# another kernel is refused, its verdicts not taken.
mkdir -p "$tmp/other"
ln -s "$entry"/* "$tmp/other/"
rm -f "$tmp/other/build-id"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
want_id=$(bash -c '. "$1/lib.sh" && . "$1/vm/qemu.sh" &&
	elf_build_id "$(boot_image "$2" auto)"' _ "$TOOLS" "$entry") ||
	not_ok "the stock kernel has a build ID"
printf '%040d\n' 0 >"$tmp/other/build-id"
check_rc "vm-run: another kernel than the entry's build-id exits 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$tmp/other" --initrd "$tmp/initrd.gz" \
		--out "$tmp/out-other" --accel tcg
check "the error names both build IDs" \
	grep -q "build ID $want_id .*not the one meant: build ID $(printf '%040d' 0)" "$tmp/rc.err"
check "no verdicts taken from another kernel" \
	test ! -e "$tmp/out-other/results.ktap" -a ! -s "$tmp/rc.out"
# shellcheck disable=SC2016 # bash -c gets its values as $1...
check "the stand-in's document names the kernel booted" \
	bash -c '[ "$("$1" kernel "$2")" = "$3 build-id $4" ]' _ "$KTAP" \
		"$tmp/out0/results.ktap" "$(cat "$entry/krel")" "$want_id"
check_rc "vm-run: a document without its kernel line exits 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out-noid" \
		--accel tcg -- --no-identity
grep -q "does not say which kernel it ran" "$tmp/rc.err" ||
	not_ok "the error says the document does not name its kernel" "$(tail -n 2 "$tmp/rc.err")"

# A state QEMU refuses to restore: the boot falls back to booting afresh,
# and its document says so.
head -c 4096 /dev/urandom >"$tmp/bad.state"
check_rc "vm-run --restore of a bad state boots afresh: the suite's rc 4" 4 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --accel tcg \
		--out "$tmp/out-refused" --restore "$tmp/bad.state" -- --rc 4
check "its document's first line: booted afresh, the restore failed" \
	grep -qE '^# boot 1: booted afresh \([0-9.]+ s\): the restore failed: ' \
		<(head -n 1 "$tmp/out-refused/results.ktap")
if pgrep -f "$tmp/out-(wedge|die|refused|panic|short|kill|other|noid)" >/dev/null; then
	not_ok "no QEMU left behind after wedges, deaths and refusals"
fi
check_rc "vm-run: a missing initramfs exits 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/none.gz" --out "$tmp/out-none"
check_rc "vm-run: an --out it cannot make exits 3, not 1 (a case failed)" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out /dev/null/out
# An initramfs that is no image: the kernel panics before /init, every time.
head -c 4096 /dev/urandom >"$tmp/junk.gz"
check_rc "vm-run: a kernel that panics before the suite exits 3" 3 \
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/junk.gz" --out "$tmp/out-junk" \
		--accel tcg --timeout 60
crashed='^vm-run: boot 1: the kernel crashed before the suite began (Kernel panic'
check "it was booted once more, and only once" \
	test "$(grep -c "$crashed" "$tmp/rc.err")" = 1
check "the error names the panic" \
	grep -q '^vm-run: error: the guest did not start the suite (.*: Kernel panic - not' \
		"$tmp/rc.err"

section "finished"
checks_summary
