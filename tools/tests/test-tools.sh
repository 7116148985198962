#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-tools.sh - host tests of fetch-kernel.sh, fetch-source.sh, mkinitramfs.sh,
# guest-init.sh and vm-run: the stock kernel with a stand-in suite under TCG.
#
# usage: test-tools.sh [--full] [--keep]
#   --full   also boot the bzImage (not its PVH entry): 15 s more
#   --keep   keep the scratch directory and say where it is

# shellcheck disable=SC2016 # code in single quotes: bash -c, eval and remade expand it
set -euo pipefail

# shellcheck source=tools/tests/lib-tests.sh
. "$(dirname "$0")/lib-tests.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"
full=0
test_options "$@"
need_cmd make gcc cpio gzip qemu-system-x86_64

# exits STATUS CMD...: CMD exits STATUS; its stdout in $tmp/out, stderr in $tmp/err.
exits()
{
	local rc=0

	"${@:2}" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	echo "exit $rc, want $1" >>"$tmp/err"
	[ "$rc" = "$1" ]
}

# says STATUS REGEX CMD...: CMD exits STATUS, its stderr matching REGEX.
says()
{
	exits "$1" "${@:3}" && grep -qE -- "$2" "$tmp/err"
}

# usage_on STATUS STREAM TOOL ARG: TOOL ARG exits STATUS, its usage on STREAM.
usage_on()
{
	exits "$1" "$TOOLS/$3" "$4" && grep -qi '^usage:' "$tmp/$2"
}
for tool in kernel/fetch-kernel.sh kernel/fetch-source.sh vm/mkinitramfs.sh vm/vm-run \
	    tests/test-tools.sh; do
	check "$tool --help: exit 0, its usage on stdout" usage_on 0 out "$tool" --help
	check "$tool --bogus: exit 2, its usage on stderr" usage_on 2 err "$tool" --bogus
done
while read -r tool args; do
	# shellcheck disable=SC2086 # the arguments, a word each
	check "$tool $args: exit 2" exits 2 "$TOOLS/$tool" $args
done <<'EOF'
vm/vm-run --kernel x --initrd y --out z --accel bad
vm/vm-run --kernel x --initrd y --out z --timeout 0
vm/mkinitramfs.sh --kernel x --suite y
kernel/fetch-source.sh --series 7.2 --kver 6.1.192-3
kernel/fetch-source.sh --series 9.9
EOF

for name in linux-image-amd64 linux-image-6.1.0-57-amd64-unsigned \
	    linux-image-6.1.0-57-cloud-amd64 linux-image-7.2.13+deb14-rt-amd64 \
	    linux-image-6.12.118+deb13-amd64-dbg; do
	check "not a plain amd64 image: $name" grep -vqE "$DEB_IMAGE_RE" <<<"$name"
done

for makefile in 'include /usr/src/c/Makefile\nCC = gcc-16' '# nothing'; do
	check "a headers Makefile of no known form (or no include) exits 3: $makefile" \
		exits 3 eval 'printf "$makefile\n" | (headers_makefile h c)'
done

entry=$("$TOOLS/kernel/fetch-kernel.sh" | tail -n 1)
krel=$(cat "$entry/krel")
kver=${entry##*/}
stock=stock/$(basename "$(dirname "$entry")")	# stock/<release>
# An apt-get, and an apt-cache beside it, that record being called and fail.
mkdir -p "$tmp/no-apt-get" "$tmp/no-apt"
for cmd in no-apt-get/apt-get no-apt/apt-cache; do
	printf '%s\n' '#!/bin/sh' "echo \"\$0 \$*\" >>$tmp/apt.calls" 'exit 1' >"$tmp/$cmd"
	chmod +x "$tmp/$cmd"
done
check "fetch-kernel.sh again: a cache hit, apt asked nothing (its answers kept)" \
	exits 0 env PATH="$tmp/no-apt:$tmp/no-apt-get:$PATH" "$TOOLS/kernel/fetch-kernel.sh"
check "... the same entry" test "$(tail -n 1 "$tmp/out")" = "$entry" -a ! -e "$tmp/apt.calls"
real=$(readlink -f "$entry")
find "$real/kdir/" "$real/usr/src" "$real/lib/modules" -type l -exec readlink -f {} + |
	awk -v e="$real/" 'index($0, e) != 1' >"$tmp/err" || echo "a link dangles" >>"$tmp/err"
check "the entry's kernel build links resolve inside it" test ! -s "$tmp/err"
# The stand-in suite's module, loaded by its modprobe_extra.
mkdir -p "$tmp/hello"
printf '%s\n' '#include <linux/module.h>' 'MODULE_LICENSE("GPL");' \
	'MODULE_DESCRIPTION("module_async tools test module");' >"$tmp/hello/ma_standin.c"
echo 'obj-m := ma_standin.o' >"$tmp/hello/Makefile"
check "a module builds against the entry's kdir" \
	exits 0 make -C "$entry/kdir" KBUILD_EXTMOD="$tmp/hello" modules

# Corrupted entries, in a throw-away cache seeded with the .debs.
cache=$tmp/cache
mkdir -p "$cache/debs" "$cache/$stock/$kver/kdir" "$cache/$stock/$kver.tmp.leftover"
cp -l "${entry%/"$stock"/*}"/debs/*_"$kver"_*.deb "$cache/debs/" 2>/dev/null ||
	cp "${entry%/"$stock"/*}"/debs/*_"$kver"_*.deb "$cache/debs/"
echo junk >"$cache/$stock/$kver/.complete"
touch "$cache/$stock/$kver/stale"
# refetch FILE: fetch-kernel.sh there, without apt-get, makes FILE as it is here.
refetch()
{
	exits 0 env MODULE_ASYNC_CACHE="$cache" PATH="$tmp/no-apt-get:$PATH" \
		"$TOOLS/kernel/fetch-kernel.sh" && cmp -s "$entry/$1" "$cache/$stock/$kver/$1"
}
check "an entry with a mismatched stamp is made again from the cached .debs" refetch .complete
check "... clean: no stale file, no leftover temporary directory" \
	test ! -e "$cache/$stock/$kver/stale" -a ! -e "$cache/$stock/$kver.tmp.leftover"
truncate -s 0 "$cache/$stock/$kver/krel"
check "... and an entry damaged since is made again, whole" refetch krel
check "apt-get was not called to make them" test ! -e "$tmp/apt.calls"

# A translated locale, made here (the locales package's sources) in a
# private LOCPATH: apt is read, and its answers kept, untranslated.
mkdir -p "$tmp/locale"
if localedef -i de_DE -f UTF-8 "$tmp/locale/de_DE.UTF-8" >/dev/null 2>&1; then
	german=(env LOCPATH="$tmp/locale" LANG=de_DE.UTF-8 LC_ALL=de_DE.UTF-8 LANGUAGE=de)
	check "apt answers in German here (else the next checks prove nothing)" \
		bash -c '"$@" apt-cache policy linux-image-amd64 | grep -q Installationskandidat' \
		_ "${german[@]}"
	rm -rf "$cache/apt-answers"
	check "fetch-kernel.sh in German, apt asked afresh: exit 0" \
		exits 0 "${german[@]}" MODULE_ASYNC_CACHE="$cache" PATH="$tmp/no-apt-get:$PATH" \
		"$TOOLS/kernel/fetch-kernel.sh"
	check "... the cached entry" test "$(tail -n 1 "$tmp/out")" = "$cache/$stock/$kver"
	check "... apt's answers kept, none of them translated" \
		bash -c '[ -n "$(ls "$1")" ] && ! grep -rq Installationskandidat "$1"' \
		_ "$cache/apt-answers"
else
	skip "a German locale: localedef cannot make de_DE.UTF-8 (the locales package?)"
fi

# entry_fault FAULT: entry_valid of a small entry $e after FAULT (shell code).
entry_fault()
{
	bash -c '. "$1/lib.sh"; e=$2
		 entry_tmp "$e"; mkdir -p "$ENTRY_TMP/lib/m"
		 echo kernel >"$ENTRY_TMP/vmlinuz"; echo module >"$ENTRY_TMP/lib/m/a.ko"
		 entry_commit "$e" stamp; eval "$3"; entry_valid "$e" stamp' \
		_ "$TOOLS" "$tmp/entry.$RANDOM" "$1"
}
while read -r want fault; do
	check "entry_valid after '$fault': $want" exits "$want" entry_fault "$fault"
done <<'EOF'
0 :
0 echo x >"$e/new"
1 rm "$e/.complete"
1 truncate -s 3 "$e/lib/m/a.ko"
1 rm -r "$e/lib"
1 rm "$e/.manifest"
1 echo kernel2 >"$e/vmlinuz"
EOF
check "... the file not intact named" \
	grep -q 'vmlinuz is missing or not its size (7 bytes)' "$tmp/err"
check "fetch-kernel.sh --kver a version apt does not know: exit 3, naming it" \
	says 3 0.0.1-1 env MODULE_ASYNC_CACHE="$cache" "$TOOLS/kernel/fetch-kernel.sh" \
		--kver 0.0.1-1

src=$("$TOOLS/kernel/fetch-source.sh" | tail -n 1)
check "build-kernel.sh --src 7.2 on a 6.1 tree: exit 3, naming the mismatch" \
	says 3 'not the --src 7\.2 asked for' \
	"$TOOLS/kernel/build-kernel.sh" --variant patched --src 7.2 --source "$src"

suite=$tmp/suite
mkdir -p "$suite/modules"
cp "$tmp/hello/ma_standin.ko" "$suite/modules/"
echo "timeout=60" >"$suite/settings"
# The stand-in runner: the kernel's modules the cases load, for mkinitramfs.sh.
printf '%s\n' '#!/bin/sh' 'printf "%s\n" null_blk kyber-iosched bfq' >"$suite/module_async"
printf '%s\n' modprobe_null_blk modprobe_extra dmesg_util_linux modprobe_kmod \
	request_module_kyber guest_knobs >"$suite/ok.cases"
printf '%s\n' ok_first wedge_exit ok_middle wedge_hang >"$suite/wedge.cases"
printf '%s\n' ok_first panic hang >"$suite/die.cases"
printf '%s\n' ok_first ok_second >"$suite/repeat.cases"
printf '%s\n' ok_first bounded >"$suite/stall.cases"
printf '%s\n' ok_first chatty >"$suite/long.cases"
cat >"$suite/module_async.sh" <<'EOF'
#!/bin/sh
# Stand-in suite: the cases of --scenario NAME's NAME.cases (of those, --case)
# and --then "CASE...", planned as --plan N says; exit --rc's status.  ok_* pass,
# wedge_* wedge the kernel, panic crashes it, hang hangs, short exits 0.
dir=$(dirname "$0")
name=ok wanted='' more='' plan='' rc=0 identity=true prev='' cases='' n=0 wedged=''
for a in "$@"; do
	case $prev in
	--scenario) name=$a ;;
	--case) wanted="$wanted $a" ;;
	--then) more=$a ;;
	--plan) plan=$a ;;
	--rc) rc=$a ;;
	esac
	[ "$a" != --no-identity ] || identity=false
	prev=$a
done
for c in $(cat "$dir/$name.cases") $more; do
	case " ${wanted:-$c} " in *" $c "*) cases="$cases $c" ;; esac
done

t()
{
	if "$@" >/dev/null 2>&1; then echo "ok $n $c"; else echo "not ok $n $c"; fi
}

echo "TAP version 13"
echo "1..${plan:-$(($(echo $cases | wc -w)))}"
if $identity; then
	# The release and the build ID, as the runner names them.
	notes=$(od -An -tx1 -v /sys/kernel/notes | tr -d ' \n')
	id=${notes#*040000001400000003000000474e5500}
	echo "# kernel: $(uname -r) build-id $(echo "$id" | cut -c1-40)"
fi
echo "# policy: standin"
if [ "$name" = ok ]; then
	for a in "$@"; do echo "# arg: [$a]"; done
	# Kernel messages while guest-init copies long lines to the console.
	long=$(printf '%0400d' 0)
	for i in $(seq 20); do
		echo "# long line $i: $long"
	done
	for i in $(seq 100); do
		echo "<6>standin: kernel line $i of 100" >/dev/kmsg
	done
	echo "<7>standin: a debug line" >/dev/kmsg
	echo "stand-in stderr" >&2
fi
for c in $cases; do
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
		# A while after ok_first, which a restored clock must show.
		[ "$c" != wedge_exit ] || sleep 2
		echo "# $c: the load is stuck in D state"
		echo "# $c: TIMEOUT after 1s"
		echo "not ok $n $c # TIMEOUT"
		echo "# $c: TIMEOUT the load did not return"
		echo "# kernel wedged by $c"
		wedged=$c rc=1
		;;
	panic)
		sleep 1		# the serial line drains
		echo c >/proc/sysrq-trigger
		;;
	hang) exec sleep 600 ;;
	short) exit 0 ;;
	chatty)
		# 25 s of work, a line a second (as --repeat's long runs).
		for i in $(seq 25); do
			echo "# $c: $i"
			sleep 1
		done
		echo "ok $n $c"
		;;
	bounded)
		# Back within 3 s of the guest's time, else not ok: the case's bound.
		echo "# $c: begins"
		t0=$(date +%s)
		sleep 1
		if [ $(($(date +%s) - t0)) -le 3 ]; then
			echo "ok $n $c"
		else
			echo "not ok $n $c # did not return within 3 s"
		fi
		;;
	modprobe_null_blk) t modprobe null_blk nr_devices=1 ;;
	modprobe_extra) t modprobe ma_standin ;;
	dmesg_util_linux) t sh -c 'dmesg --version | grep -q util-linux' ;;
	modprobe_kmod) t sh -c 'modprobe --version | grep -q "^kmod version"' ;;
	request_module_kyber)
		t sh -c 'echo kyber >/sys/block/nullb0/queue/scheduler &&
			grep -q "\[kyber\]" /sys/block/nullb0/queue/scheduler'
		;;
	guest_knobs)
		t sh -c 'grep -qx 10 /proc/sys/kernel/hung_task_timeout_secs &&
			{ [ ! -e /sys/kernel/rcu_expedited ] ||
			  grep -qx 1 /sys/kernel/rcu_expedited; } &&
			grep -q "^2[[:space:]]" /proc/sys/kernel/printk'
		;;
	esac
done
echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0"
case $wedged in
wedge_hang) exec sleep 600 ;;		# never exits: no end marker
wedge_exit)
	# The driver's cleanup report, seconds after the last line: the host waits.
	sleep 4
	echo "# cleanup: the async job of ma_standin is stuck"
	sleep 600 & exit 1	# what it left holds stdout
	;;
esac
exit "$rc"
EOF
chmod +x "$suite/module_async.sh" "$suite/module_async"

# pack OUT [ENTRY [SUITE]]: mkinitramfs.sh (default: the stand-in, stock kernel).
pack()
{
	"$TOOLS/vm/mkinitramfs.sh" --kernel "${2:-$entry}" --suite "${3:-$suite}" --out "$1"
}
check "mkinitramfs.sh builds an initramfs" exits 0 pack "$tmp/initrd.gz"
# remade CHANGE [SAID]: after CHANGE (code), mkinitramfs.sh said SAID (wrote).
remade()
{
	eval "$1"
	exits 0 pack "$tmp/initrd.gz" && grep -q "${2:-wrote }" "$tmp/err"
}
check "mkinitramfs.sh again from the same inputs keeps the image" remade : 'is up to date'
check "... remakes it after a suite file changed" remade 'echo "# x" >>"$suite/settings"'
check "... and after it changed back" remade 'sed -i "/^# x$/d" "$suite/settings"'
check "... and when the image is not the one it wrote" remade 'touch "$tmp/initrd.gz"'
check "... and without its stamp" remade 'rm "$tmp/initrd.gz.inputs"'
root=$tmp/root
mkdir "$root"
zcat "$tmp/initrd.gz" | (cd "$root" && cpio -id --quiet)
kmod_links=$(cd "$root/sbin" && readlink modprobe insmod rmmod lsmod depmod modinfo |
	grep -cx /bin/kmod) || true
check "initramfs has the suite's settings, bfq and the kmod tools ($kmod_links of 6)" \
	test -e "$root/opt/module_async/settings" -a "$kmod_links" = 6 \
		-a -e "$root/lib/modules/$krel/kernel/block/bfq.ko"
check "the test modules are packed once, without debug information" \
	bash -c '[ -L "$1/opt/module_async/modules" ] &&
		 ! readelf -S "$1/opt/module_async/modules/ma_standin.ko" | grep -q debug_info' \
		_ "$root"
kmod_bin=$("$TOOLS/vm/build-kmod.sh" 2>/dev/null) || kmod_bin=/nonexistent
check "the initramfs's kmod is build-kmod.sh's" cmp -s "$kmod_bin" "$root/bin/kmod"
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
check "build-kmod.sh builds a damaged entry again" \
	bash -c '[ "$(MODULE_ASYNC_CACHE=$1 "$2" 2>/dev/null)" = "$3/kmod" ] &&
		 "$3/kmod" --version >/dev/null' _ "$kcache" "$TOOLS/vm/build-kmod.sh" "$kentry"
rm -rf "$kcache"
check "mkinitramfs.sh again into another file" exits 0 pack "$tmp/initrd2.gz"
check "... gives the same bytes" cmp -s "$tmp/initrd.gz" "$tmp/initrd2.gz"
mkdir -p "$tmp/fake/lib/modules/0.0-fake" "$tmp/nosuite"
echo 0.0-fake >"$tmp/fake/krel"
: >"$tmp/fake/lib/modules/0.0-fake/modules.dep"
check "mkinitramfs.sh of a kernel without null_blk: exit 3, naming it" \
	says 3 null_blk pack "$tmp/bad.gz" "$tmp/fake"
check "mkinitramfs.sh of a suite without module_async.sh: exit 3, saying so" \
	says 3 'has no module_async\.sh' pack "$tmp/bad.gz" "$entry" "$tmp/nosuite"

# vm NAME ARG...: vm-run of the stand-in, TCG, into $tmp/out-NAME (ARG's last wins).
vm()
{
	"$TOOLS/vm/vm-run" --kernel "$entry" --initrd "$tmp/initrd.gz" --out "$tmp/out-$1" \
		--accel tcg "${@:2}"
}
printf '%s\n' 'TAP version 13' 1..6 '# policy: standin' '# arg: [two words]' '# arg: [x=1]' \
	'ok 1 modprobe_null_blk' 'ok 2 modprobe_extra' 'ok 3 dmesg_util_linux' \
	'ok 4 modprobe_kmod' 'ok 5 request_module_kyber' 'ok 6 guest_knobs' \
	'# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0' >"$tmp/expected.ktap"
# On a busy host (two busy loops) the guest's vCPUs lose the CPU at any
# moment: then a kernel message can break a line the console is printing.
busy=()
for _ in 1 2; do
	timeout 120 bash -c 'while :; do :; done' &
	busy+=($!)
done
check "vm-run boots the stand-in suite on a busy host: rc 0" \
	exits 0 vm ok -- "two words" x=1
kill "${busy[@]}"
wait "${busy[@]}" 2>/dev/null || true
grep -v -e '^# long line' -e '^# kernel: ' "$tmp/out" | diff "$tmp/expected.ktap" - >"$tmp/diff" ||
	true
details=$tmp/diff check "vm-run prints the suite's KTAP" test ! -s "$tmp/diff"
check "results.ktap is what vm-run printed" cmp -s "$tmp/out" "$tmp/out-ok/results.ktap"
# A boot that saves no state has its arguments (whole, above) in its initramfs.
check "no state saved: the arguments in the initramfs, no READY, the image gone" \
	bash -c '! grep -q MODULE_ASYNC_READY "$1/serial1.log" && [ ! -e "$1/boot.initrd" ]' \
		_ "$tmp/out-ok"
tr -d '\r' <"$tmp/out-ok/console.log" >"$tmp/console"
n=$(grep -cE '^(# long line|\[ *[0-9.]+\] standin: kernel line) [0-9]+(: 0{400}| of 100)$' \
	"$tmp/console") || true
check "console.log: kernel messages never break its lines ($n of 120 whole)" test "$n" = 120
check "console.log has the suite's stderr, not a debug message" \
	test "$(grep -cE 'stand-in stderr|standin: a debug line' "$tmp/console")" = 1

if [ "$full" = 1 ]; then
	check "vm-run passes on the suite's rc 4 (bzImage boot)" exits 4 \
		vm bzimage --kernel "$entry/vmlinuz" --boot bzimage -- --rc 4
fi
# A fresh cache: no KVM verdict and no unpacked kernel yet.
check "vm-run passes on the suite's rc 1 (accel auto, fresh cache)" exits 1 \
	env MODULE_ASYNC_CACHE="$tmp/cache" "$TOOLS/vm/vm-run" --kernel "$entry" \
		--initrd "$tmp/initrd.gz" --out "$tmp/out-auto" -- --rc 1
[ ! -w /dev/kvm ] || check "accel auto remembered its KVM verdict" \
	test -n "$(grep -lxE 'kvm|tcg' "$tmp/cache"/kvm-verdict/* 2>/dev/null)"
check "vm-run watchdog: no end marker in 2 s exits 3" exits 3 vm timeout --timeout 2
check "vm-run watchdog: 25 s of a suite never silent 20 s is no timeout: rc 0" \
	exits 0 vm long --timeout 20 --cases "$suite/long.cases" -- --scenario long

# Boot 1 wedges in wedge_exit; boot 2, restored, in wedge_hang, which never ends.
start=$SECONDS
check "vm-run resumes after wedges in fresh VMs: rc 1" exits 1 vm wedge --timeout 120 \
	--cases "$suite/wedge.cases" -- --scenario wedge --allow-deadlock
took=$((SECONDS - start))
verdicts=$("$KTAP" verdicts "$tmp/out" | paste -sd ' ') || true
notes=$(grep -cF -e '# cleanup: the async job of ma_standin is stuck' \
	-e '# resumed in a fresh VM (boot 2) after wedge_exit wedged the kernel' \
	-e '# boot 2: restored from the state saved before the first case (' \
	-e '# boot 2 policy: standin' -e '# Totals: pass:2 fail:2 ' "$tmp/out") || true
want='1 ok_first ok 2 wedge_exit timeout 3 ok_middle ok 4 wedge_hang timeout'
details=$tmp/out check "one KTAP document: every case once, in order, with the resume notes" \
	test "$verdicts, $notes notes" = "$want, 5 notes"
check "a boot that saves its state asks for its arguments: READY" \
	grep -q MODULE_ASYNC_READY "$tmp/out-wedge/serial1.log"
check "boot 2 was restored, not booted" \
	grep -qE '^vm-run: boot 2: restored: the guest waits for its arguments after' "$tmp/err"
check "vm-run logs the time to each verdict" \
	grep -qE '^vm-run: boot 2: [0-9.]+ s to verdict: not ok 2 wedge_hang' "$tmp/err"
# ok_middle's clock (boot 2, restored) is wedge_exit's 2 s after ok_first's.
gap=$(sed -n 's/^# clock: //p' "$tmp/out-wedge/results.ktap" |
	awk 'NR == 1 { t = $1 } END { print NR == 2 ? $1 - t : -1 }')
check "the restored guest's clock is the host's, not the saved one's ($gap s)" test "$gap" -ge 2
check "the saved state is removed at the end" test ! -e "$tmp/out-wedge/guest.state"
check "no boot waited for its watchdog after a wedge ($took s)" test "$took" -lt 120
check "each boot's KTAP is kept (boot-1.ktap, boot-2.ktap)" \
	test -s "$tmp/out-wedge/boot-2.ktap" -a ! -e "$tmp/out-wedge/boot-3.ktap"
check "guest-init ends the run when a leftover holds the suite's stdout" \
	test "$(grep -ac 'MODULE_ASYNC_END rc=1' "$tmp/out-wedge/serial1.log")" = 1

# pid_when OUT REGEX PATTERN: the pid of the process pgrep -f PATTERN finds
# once OUT's results channel has a line matching REGEX (-E); fails if none
# within 120 s.
pid_when()
{
	local i pid

	for ((i = 0; i < 1200; i++)); do
		if grep -Eqs "$2" "$1/serial1.boot.out"; then
			pid=$(pgrep -f "$3" | head -n 1) && echo "$pid" && return
		fi
		sleep 0.1
	done
	return 1
}

# A host that stalls QEMU (SIGSTOP, 5 s) in a case bound to 3 s of the guest's time.
check "vm-run: a case bound to 3 s, no stall: rc 0" \
	exits 0 vm nostall --cases "$suite/stall.cases" -- --scenario stall
# stall_run: vm-run into $tmp/out-stall, QEMU stopped 5 s as bounded begins;
# its status in $stall_rc.
stall_run()
{
	local out=$tmp/out-stall pid qemu

	vm stall --timeout 120 --cases "$suite/stall.cases" -- --scenario stall \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	qemu=$(pid_when "$out" '^# bounded: begins' "^qemu-system-x86_64 .*$out/") || qemu=
	if [ -n "$qemu" ]; then
		kill -STOP "$qemu"
		sleep 5		# the stall itself
		kill -CONT "$qemu"
	fi
	stall_rc=0
	wait "$pid" || stall_rc=$?
	[ -n "$qemu" ]
}
check "QEMU stopped 5 s by the host as the bounded case began" stall_run
check "... the guest's clock jumped: the case missed its bound" \
	grep -q '^not ok 2 bounded' "$tmp/out-stall/results.ktap"
check "... not the kernel's failure: exit 3 ($stall_rc)" test "$stall_rc" = 3
check "... saying the host stalled QEMU" \
	grep -qE '^vm-run: error: boot 1: the host stalled QEMU for [5-9]\.[0-9] s' "$tmp/err"

died='^vm-run: error: boot 1: guest died: Kernel panic - not syncing: '
check "vm-run: a guest that dies: rc 3, the panic and the case named" \
	says 3 "$died.*, after 1 results of 3 planned \\(in panic\\)" \
	vm die --timeout 20 --cases "$suite/die.cases" -- --scenario die
check "the kernel's last lines are on stderr" \
	grep -qE '^\[ *[0-9.]+\] Kernel panic - not syncing' "$tmp/err"
check "no new VM after a guest died" test -z "$(grep 'boot 2' "$tmp/err")"
crash='Kernel panic - not syncing: sysrq triggered crash'
check "the panicking case is ERROR: the guest died" \
	test "$("$KTAP" directive panic "$tmp/out-die/results.ktap")" = "ERROR guest died: $crash"
check "... the console's panic its evidence" \
	grep -q "^# console: .*$crash" <("$KTAP" diag panic "$tmp/out-die/results.ktap")

# Every listed case has its result after the third, but the plan wants five.
for how in panic short; do
	check "vm-run: the guest ends ($how) short of the plan, after every listed case: rc 3" \
		says 3 'after 3 results of 5 planned' vm "$how" --timeout 60 \
		--cases "$suite/repeat.cases" -- --scenario repeat --plan 5 --then "ok_first.2 $how"
done

# run_then_kill NAME WHAT: vm-run into $tmp/out-NAME, its lock held as vm.sh does;
# at the third result SIGKILL to WHAT's process.  Its status in $kill_rc.
run_then_kill()
{
	local out=$tmp/out-$1 pid victim

	(
		exec 7>"$out.lock"
		flock -n 7 || exit 99
		vm "$1" --timeout 120 --cases "$suite/repeat.cases" -- --scenario repeat \
			--plan 5 --then "ok_first.2 hang"
	) >/dev/null 2>"$tmp/err" &
	pid=$!
	victim=$(pid_when "$out" '^ok 3 ' "$2") || victim=
	[ -z "$victim" ] || kill -KILL "$victim"
	kill_rc=0
	wait "$pid" || kill_rc=$?
	[ -n "$victim" ]
}
check "QEMU killed by the host after the third result" \
	run_then_kill kill "^qemu-system-x86_64 .*$tmp/out-kill/"
check "vm-run: QEMU killed mid-run exits 3 ($kill_rc)" test "$kill_rc" = 3
check "... saying the guest died" \
	grep -q "guest died: QEMU exited without the end marker, after 3 results of 5" "$tmp/err"
check "vm-run killed (SIGKILL) after the third result" \
	run_then_kill guard "vm-run .*--out $tmp/out-guard "
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

mkdir -p "$tmp/other"
ln -s "$entry"/* "$tmp/other/"
rm -f "$tmp/other/build-id"
printf '%040d\n' 0 >"$tmp/other/build-id"
# The stock kernel's build ID, as its document named it (vm-run took it).
want_id=$("$KTAP" kernel "$tmp/out-ok/results.ktap")
want_id=${want_id##* }
check "vm-run: another kernel than the entry's build-id: exit 3, both IDs named" \
	says 3 "build ID $want_id .*not the one meant: build ID $(printf '%040d' 0)" \
	vm other --kernel "$tmp/other"
check "no verdicts taken from another kernel" \
	test ! -e "$tmp/out-other/results.ktap" -a ! -s "$tmp/out"
check "vm-run: a document without its kernel line: exit 3, saying so" \
	says 3 "does not say which kernel it ran" vm noid -- --no-identity

# The cache's disk full as the PVH kernel is unpacked (from an entry of
# the stock image whose kdir has extract-vmlinux): no entry, exit 3.
mkdir -p "$tmp/unpack/kdir/scripts"
ln -s "$entry/vmlinuz" "$entry/krel" "$tmp/unpack/"
ln -s "$src/scripts/extract-vmlinux" "$tmp/unpack/kdir/scripts/"
if small_disk "$tmp/cache-disk"; then
	pvh=(env MODULE_ASYNC_CACHE="$tmp/cache-disk")
	check "vm-run, the cache's disk full as the PVH kernel is unpacked: exit 3, said" \
		says 3 'cannot write the unpacked kernel into the cache' \
		"${pvh[@]}" "$TOOLS/vm/vm-run" --kernel "$tmp/unpack" --initrd "$tmp/initrd.gz" \
		--out "$tmp/out-full" --accel tcg
	check "... no entry committed, nothing left" \
		test -z "$(find "$tmp/cache-disk/pvh" -mindepth 1 ! -name '*.lock')"
	mount -o remount,size=200m "$tmp/cache-disk"
	meant="^vm-run: the kernel meant to boot: build ID $want_id\$"
	check "the space back: the PVH kernel unpacked, the kernel meant checked: rc 0" \
		says 0 "$meant" "${pvh[@]}" "$TOOLS/vm/vm-run" --kernel "$tmp/unpack" \
		--initrd "$tmp/initrd.gz" --out "$tmp/out-full" --accel tcg
	# An entry committed as a full disk did before: an empty build-id, no vmlinux.
	bash -c '. "$1/lib.sh" && for e in "$2"/pvh/*/; do : >"$e/build-id" &&
		rm "$e/vmlinux" "$e/vmlinux.cksum" && entry_manifest "$e" >"$e/.manifest"
		done' _ "$TOOLS" "$tmp/cache-disk"
	check "an entry with an empty build-id is made again, the kernel meant checked" \
		says 0 "$meant" "${pvh[@]}" "$TOOLS/vm/vm-run" --kernel "$tmp/unpack" \
		--initrd "$tmp/initrd.gz" --out "$tmp/out-full" --accel tcg
else
	skip "the cache's disk full: cannot mount a tmpfs here"
fi

head -c 4096 /dev/urandom >"$tmp/bad.state"
check "vm-run --restore of a bad state boots afresh: the suite's rc 4" \
	exits 4 vm refused --restore "$tmp/bad.state" -- --rc 4
check "its document's first line: booted afresh, the restore failed" \
	grep -qE '^# boot 1: booted afresh \([0-9.]+ s\): the restore failed: ' \
		<(head -n 1 "$tmp/out-refused/results.ktap")
check "vm-run: a missing initramfs exits 3" exits 3 vm none --initrd "$tmp/none.gz"
check "vm-run: an --out it cannot make exits 3, not 1 (a case failed)" exits 3 \
	vm x --out /dev/null/out
# An initramfs that is no image: the kernel panics before /init, every time.
head -c 4096 /dev/urandom >"$tmp/junk.gz"
check "vm-run: a kernel that panics before the suite: exit 3, the panic named" \
	says 3 '^vm-run: error: the guest did not start the suite \(.*: Kernel panic - not' \
	vm junk --initrd "$tmp/junk.gz" --timeout 60
crashed='^vm-run: boot 1: the kernel crashed before the suite began (Kernel panic'
check "it was booted once more, and only once" \
	test "$(grep -c "$crashed" "$tmp/err")" = 1
check "no QEMU left behind" test -z "$(pgrep -f "qemu-system-x86_64 .*$tmp/out-")"
# One that was (the check failed) is this test's to end.
pkill -KILL -f "qemu-system-x86_64 .*$tmp/out-" || true
checks_summary
