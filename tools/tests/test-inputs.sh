#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-inputs.sh - bad input to `make vm` refused before any work: exit 2,
# one line naming what is wrong; the host's failures then exit 3, never 1.
#
# usage: test-inputs.sh

set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
test_options "$@"
details=$tmp/out

# refused WHAT REGEX ARGS...: make vm ARGS under "${vm_env[@]}" exits ${want:-2}
# (the script's, from make's "*** [...] Error N") saying REGEX (-E), no work done.
vm_env=(env)
refused()
{
	local error

	run_to "$tmp/out" "${vm_env[@]}" make -s -C "${top:-$TOP}" vm "${@:3}"
	error=$(sed -n 's/^make\(\[[0-9]*\]\)\?: \*\*\* \[.*\] Error \([0-9]*\)$/\2/p' "$tmp/out")
	status=${error:-$rc}
	echo "(exit $status)" >>"$tmp/out"
	check "$1" said "${want:-2}" "$2"
}

said()
{
	[ "$status" -eq "$1" ] && grep -Eq -- "$2" "$tmp/out" &&
		! grep -Eq '^vm\.sh: kernel |apt-get update for Debian|downloading ' "$tmp/out"
}

refused "KVER with shell code: a bad version, nothing run" \
	"bad Debian version '6\.1;touch $tmp/pwned'" "KVER=6.1;touch $tmp/pwned"
check "KVER with shell code: the code did not run" test ! -e "$tmp/pwned"
# shellcheck disable=SC2016 # make code, for make
refused "KVER with make code: refused, as text" "KVER: a '\\\$' in it, which make would run" \
	"KVER=\$(shell touch $tmp/pwned)6.1"
# shellcheck disable=SC2016 # make code, for make
check "... the code did not run, under make -n either" bash -c \
	'! make -s -n -C "$1" vm "KVER=\$(shell touch $2)6.1" >/dev/null 2>&1 && [ ! -e "$2" ]' \
	_ "$TOP" "$tmp/pwned"
# env_options: make vm with KDIR, PATCH and KERNEL exported, for other builds.
env_options()
{
	env KDIR=/no/kdir PATCH=/no/x.patch KERNEL=/no/bzImage make -s -n -C "$TOP" vm \
		>"$tmp/out" 2>&1 && ! grep -qE -- '--(kdir|patch|kernel) ' "$tmp/out"
}
details=$tmp/out check "KDIR, PATCH, KERNEL in the environment: not make vm's options" env_options

for word in maybe 2 "1 0"; do
	refused "ALLOW_DEADLOCK=$word: refused, naming the spellings" \
		"ALLOW_DEADLOCK=$word: say 1, y, yes, true or on" "ALLOW_DEADLOCK=$word"
done

# spelled: make vm ALLOW_DEADLOCK=WORD passes --allow-deadlock, before 0 in the list only.
spelled()
{
	local want=yes word got

	for word in 1 y yes true on 0 n no false off ''; do
		[ "$word" != 0 ] || want=no
		make -s -n -C "$TOP" vm ALLOW_DEADLOCK="$word" >"$tmp/out" 2>&1 || return 1
		got=no
		! grep -q -- '--allow-deadlock' "$tmp/out" || got=yes
		echo "ALLOW_DEADLOCK=$word read as $got" >>"$tmp/out"
		[ "$got" = "$want" ] || return 1
	done
}
check "ALLOW_DEADLOCK: 1 y yes true on allow, 0 n no false off and empty do not" spelled

refused "KERNEL=no/such/file: no such kernel image" \
	"no such kernel image: no/such/file$" KERNEL=no/such/file
refused "KERNEL path with a space: named whole" \
	"no such kernel image: $tmp/a b$" "KERNEL=$tmp/a b"

# A build tree (a Makefile, its release, its modules), its headers only (no
# modules.order), and a file with a bzImage's boot protocol header.
kdir=$tmp/kdir
mkdir -p "$kdir/include/generated"
echo 'all:' >"$kdir/Makefile"
echo '#define UTS_RELEASE "6.1.0-test"' >"$kdir/include/generated/utsrelease.h"
cp -r "$kdir" "$tmp/headers"
: >"$kdir/modules.order"
{ head -c $((0x202)) /dev/zero && printf HdrS; } >"$tmp/bzImage"
refused "KERNEL=/etc/passwd KDIR=<a build tree>: no bzImage" \
	'/etc/passwd is no bzImage \(no boot protocol header: "HdrS" at offset 0x202\)' \
	KERNEL=/etc/passwd "KDIR=$kdir"
refused "KDIR=<headers> without a module tree beside them" \
	"holds headers only and no lib/modules/<release>/ is beside them" \
	"KERNEL=$tmp/bzImage" "KDIR=$tmp/headers"
refused "MODDIR= that is no module tree" "$tmp is no module tree \(no kernel/ in it\)" \
	"KERNEL=$tmp/bzImage" "KDIR=$kdir" "MODDIR=$tmp"
printf '%s\n' '--- a/x' '+++ b/x' >"$tmp/x.patch"
refused "PATCH= on the stock kernel" "--patch goes with a kernel built from source" \
	KERNEL=stock "PATCH=$tmp/x.patch"
refused "KSRC= that is no kernel tree" "--ksrc $tmp: not a kernel source tree" "KSRC=$tmp"
refused "KSRC= with KERNEL=stock" "--ksrc goes with a kernel built from source" \
	KERNEL=stock "KSRC=$tmp"

refused "DIST=woody: an unknown release, apt not asked" \
	"bad Debian release 'woody' \(known: bullseye bookworm " DIST=woody
refused "SRC=9.9: an unknown series, apt not asked" \
	"bad series '9\.9': no known Debian release carries linux-source-9\.9" SRC=9.9

vm_env=(env -u HOME -u XDG_CACHE_HOME -u MODULE_ASYNC_CACHE)
refused "no HOME, XDG_CACHE_HOME or MODULE_ASYNC_CACHE: no cache, said so" \
	"no cache: HOME, XDG_CACHE_HOME and MODULE_ASYNC_CACHE are all unset"
vm_env=(env)

# A checkout whose path holds a space (a runner built there would go to the
# path's first word): refused, nothing written in it or beside it.
top="$tmp/a b/clone"
mkdir -p "$top"
clone_files | rsync -a --from0 --files-from=- "$TOP/" "$top/" || die "cannot copy the suite"
(cd "$top" && find . | LC_ALL=C sort) >"$tmp/before"
refused "a checkout under a path with a space: refused, naming it" \
	"the checkout $top: it holds a space"
nothing_written()
{
	find "$tmp" -maxdepth 2 ! -path "$tmp/a b/clone/*" >"$tmp/out"
	[ ! -e "$tmp/a" ] && [ "$(ls -A "$tmp/a b")" = clone ] &&
		(cd "$top" && find . | LC_ALL=C sort) | cmp -s - "$tmp/before"
}
check "a checkout under a path with a space: nothing written, in it or beside it" \
	nothing_written
unset top
for v in OUTPUT KDIR INSTALL_PATH; do
	refused "$v with a space: refused by make" "$v=$tmp/o p: it holds a space" "$v=$tmp/o p"
done

# SUITE_ARGS, by the runner's own checks (their messages: test-driver.sh).
refused "SUITE_ARGS with an unknown case: the runner's usage error" \
	"unknown case: no_such_case" SUITE_ARGS="--case no_such_case"
want=0 refused "SUITE_ARGS=--help: the suite's help, no VM" \
	'^Usage: .*module_async \[options\]' SUITE_ARGS=--help
# A prefix the runner's getopt_long would take means another option to
# vm.sh, vm-run and module_async.sh: names are whole, else refused.
for a in --he --list-m "--ca async_init_completes" --allow; do
	refused "SUITE_ARGS='$a': a prefix, refused before any work" \
		"unknown option: ${a%% *} \(names are whole: --" SUITE_ARGS="$a"
done

# read_only DIR CMD...: CMD with DIR read-only, to root too (a read-only
# bind mount in a mount namespace); 125, saying why, when it cannot be.
read_only()
{
	local dir=$1 rc=0

	shift
	if [ "$(id -u)" -eq 0 ]; then
		unshare -m --propagation private true 2>/dev/null || {
			log "read_only: no mount namespace here (unshare -m)"
			return 125
		}
		# shellcheck disable=SC2016 # the inner shell expands them
		unshare -m --propagation private sh -c \
			'mount --bind -o ro "$1" "$1" || exit 125; shift; exec "$@"' sh "$dir" "$@"
		return
	fi
	chmod a-w "$dir" || return 125
	"$@" || rc=$?
	chmod u+w "$dir"
	return "$rc"
}

# The host's failures before any work: exit 3, each said.
mkdir -p "$tmp/cache" "$TOP/build/vm/stock"
vm_env=(read_only "$tmp/cache" env "MODULE_ASYNC_CACHE=$tmp/cache")
want=3 refused "a read-only empty cache: exit 3, said so" \
	"cannot write to the cache $tmp/cache"
vm_env=(read_only "$TOP/build/vm/stock")
want=3 refused "a read-only build/vm/stock: exit 3, said so" \
	"cannot write to the results directory .*/build/vm/stock"
vm_env=(env)
# A second run on a kernel whose results directory a first run locks.
exec {lock}>"$TOP/build/vm/stock/.lock"
flock -n "$lock" || die "build/vm/stock is in use: is a make vm running in this clone?"
want=3 refused "a second make vm on the same kernel: refused, naming the directory" \
	"another run is using .*/vm/stock"
exec {lock}>&-

# vm_sh WHAT STATUS REGEX ARGS...: vm.sh ARGS exits STATUS saying REGEX (-E),
# no work done if STATUS is 2.
vm_sh()
{
	run_to "$tmp/out" "${vm_env[@]}" "$TOOLS/vm/vm.sh" "${@:4}"
	echo "(exit $rc)" >>"$tmp/out"
	status=$rc
	if [ "$2" = 2 ]; then
		check "$1" said "$2" "$3"
	else
		check "$1" exited "$2" "$3"
	fi
}

exited()
{
	[ "$status" -eq "$1" ] && grep -Eq -- "$2" "$tmp/out"
}

# --out DIR: a user's files in it are no results directory's, never replaced.
mkdir -p "$tmp/mine/suite"
echo precious >"$tmp/mine/suite/notes"
vm_sh "--out DIR holding a user's suite/: refused" 2 \
	"--out $tmp/mine holds suite, which no run of vm\.sh made" --out "$tmp/mine"
check "... its files kept" grep -qx precious "$tmp/mine/suite/notes"
mkdir -p "$tmp/yours"
: >"$tmp/yours/stdout.ktap"
vm_sh "--out DIR holding a file of other name (a redirect's): taken" 2 \
	"unknown case: no_such_case" --out "$tmp/yours" -- --case no_such_case

for o in "$tmp/o,p" "$tmp/o:p" "$tmp/o p"; do
	vm_sh "--out with '${o#"$tmp"/o}': refused before any work" 2 \
		"--out $o: it holds" --out "$o"
done
vm_sh "a suite argument with a newline: refused before any work" 2 \
	"a suite argument cannot hold a newline" -- --case $'a\nb'

# An earlier run's results go as a run begins, though it fails before the VM.
mkdir -p "$tmp/stale"
: >"$tmp/stale/.lock"
for f in results.ktap console.log boot-1.ktap; do
	echo "ok 1 from an earlier run" >"$tmp/stale/$f"
done
vm_env=(read_only "$tmp/cache" env "MODULE_ASYNC_CACHE=$tmp/cache")
vm_sh "a run failing before the VM (a read-only cache): exit 3" 3 \
	"cannot write to the cache" --out "$tmp/stale"
vm_env=(env)
check "... the earlier run's results.ktap, console.log and boot-1.ktap gone" \
	test -z "$(ls "$tmp/stale")"

# A user's PATH (Debian's: no sbin) finds kmod's depmod and modinfo.
as_user=()
[ "$(id -u)" -ne 0 ] || as_user=(runuser -u nobody --)
# shellcheck disable=SC2016 # the inner shell expands it
check "a user's PATH=/usr/bin:/bin: depmod and modinfo found (${as_user[*]:-as $(id -un)})" \
	"${as_user[@]}" env -i PATH=/usr/bin:/bin HOME=/ bash -c \
	'. "$0/lib.sh" && need_cmd depmod modinfo' "$TOOLS"

# A runner that is no program (a corrupt build): the run's failure, not bad input.
top=$tmp/copy
clone_files | rsync -a --from0 --files-from=- "$TOP/" "$top/" || die "cannot copy the suite"
if make -s -C "$top" OUTPUT="$top/build" all >"$tmp/out" 2>&1; then
	# Cut short (a binary's start kept: not read as a script), then bytes as a script.
	truncate -s 4096 "$top/build/module_async"
	run_to "$tmp/out" "$top/tools/vm/vm.sh" --prepare
	status=$rc
	check "a runner cut short: exit 3, said" exited 3 '--list failed \(exit [0-9]+\)'
	head -c 4096 /dev/urandom >"$top/build/module_async"
	run_to "$tmp/out" "$top/tools/vm/vm.sh" --prepare
	status=$rc
	check "a runner of random bytes: exit 3, said" exited 3 '--list failed \(exit [0-9]+\)'
else
	fail "a corrupt runner: the runner of a copy builds"
fi
unset top

# A full results disk: the run could not be done (3, said), nothing of
# vm-run's left there; never 1, "a case failed". vm.sh's own files made
# first (its test modules cached, they fit), the disk then filled but for
# 256 KiB: vm-run's copy of the initramfs cannot be written.
if small_disk "$tmp/disk"; then
	"${vm_env[@]}" "$TOOLS/vm/vm.sh" --prepare --out "$tmp/disk/out" >/dev/null 2>&1 || true
	room=$(($(df --output=avail -k "$tmp/disk" | tail -n 1) - 256))
	[ "$room" -le 0 ] ||
		dd if=/dev/zero of="$tmp/disk/filler" bs=1k count="$room" 2>/dev/null || true
	vm_sh "a full results disk: exit 3, an error line" 3 "^vm(\.sh|-run): error: " \
		--out "$tmp/disk/out"
	check "... nothing left behind there (boot.initrd, its args, the state)" \
		test -z "$(find "$tmp/disk" -name 'boot.initrd*' -o -name '*.args.*' \
			-o -name guest.state -o -name 'qmp.*' -o -name 'serial1.boot.*')"
	check "... and no results claimed" test ! -e "$tmp/disk/out/results.ktap"
else
	skip "a full results disk: cannot mount a tmpfs here"
fi

checks_summary
