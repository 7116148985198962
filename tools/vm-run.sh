#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel and a tools/mkinitramfs.sh initramfs in QEMU, watch the run
# and collect the suite's results.
#
# The guest (tools/guest-init.sh) prints its console on ttyS0 and the suite's
# KTAP between MODULE_ASYNC_BEGIN and "MODULE_ASYNC_END rc=N" on ttyS1; both
# go to files here.  The end marker, not QEMU's exit, says the results are
# complete.  Markers are matched anywhere in a line (firmware escape codes can
# prefix one).
#
# KVM is used when /dev/kvm is usable and the guest's kernel prints its first
# line within KVM_BOOT_BOUND_S; a silent KVM guest (it happens: /dev/kvm
# exists but the guest hangs) is killed and the run restarts under TCG.  The
# verdict is remembered per host kernel and QEMU version, only so that later
# runs need not pay the bound again.
#
# A bzImage is booted through its PVH entry point where it has one: the ELF
# kernel inside it is unpacked once into the cache ($CACHE/pvh/<sha256>/).
# Under TCG that saves most of the boot (firmware and decompressor take
# about 8 of 15 s with Debian's xz-compressed kernel).
#
# Exit status: the guest suite's (0 nothing failed, 1 a case failed, 4 all
# skipped), 2 bad usage, 3 infrastructure failure (no boot, no end marker
# within --timeout, QEMU failed).  On a timeout, what the suite printed so far
# is still written to results.ktap and stdout.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

KVM_BOOT_BOUND_S=5	# a working KVM guest prints "Linux version" in < 1 s
POWEROFF_BOUND_S=3	# the results are complete: do not wait for sysrq
POLL_S=0.1

usage()
{
	cat <<EOF
Usage: $PROG --kernel ENTRY_OR_BZIMAGE --initrd FILE --out DIR [options] [-- suite args]

Boot the module_async test VM in QEMU and print the suite's KTAP.

  --kernel K      kernel entry directory (its vmlinuz is booted) or a bzImage
  --initrd FILE   initramfs from tools/mkinitramfs.sh
  --out DIR       writes DIR/results.ktap (the suite's KTAP), DIR/console.log
                  (the serial console), DIR/serial1.log (raw results channel)
  --timeout S     watchdog on the whole run, in seconds (default 300)
  --accel A       auto (default: KVM if it boots, else TCG), kvm or tcg
  --boot B        auto (default: PVH entry of the unpacked kernel if it has
                  one, else the bzImage), pvh or bzimage
  --memory M      guest memory (default 1G)
  --smp N         guest CPUs (default 2)
  --help          show this help
  -- ARGS         arguments for module_async.sh in the guest

Exit status: the suite's (0 pass, 1 fail, 4 skip), 2 usage, 3 infrastructure.
EOF
}

kernel='' initrd='' out='' timeout=300 accel=auto boot=auto memory=1G smp=2
suite_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need_arg "$1" $#; kernel=$2; shift 2 ;;
	--initrd) need_arg "$1" $#; initrd=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	--timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
	--accel) need_arg "$1" $#; accel=$2; shift 2 ;;
	--boot) need_arg "$1" $#; boot=$2; shift 2 ;;
	--memory) need_arg "$1" $#; memory=$2; shift 2 ;;
	--smp) need_arg "$1" $#; smp=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; suite_args=("$@"); break ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -n "$kernel" ] || usage_error "--kernel is required"
[ -n "$initrd" ] || usage_error "--initrd is required"
[ -n "$out" ] || usage_error "--out is required"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || usage_error "bad --timeout '$timeout'"
[[ $smp =~ ^[1-9][0-9]*$ ]] || usage_error "bad --smp '$smp'"
[[ $memory =~ ^[1-9][0-9]*[MG]?$ ]] || usage_error "bad --memory '$memory'"
case $accel in
auto|kvm|tcg) ;;
*) usage_error "bad --accel '$accel' (auto, kvm or tcg)" ;;
esac
case $boot in
auto|pvh|bzimage) ;;
*) usage_error "bad --boot '$boot' (auto, pvh or bzimage)" ;;
esac

# Infrastructure failures exit 3, not die's 1 (which is the suite's "fail").
fail()
{
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 3
}

need_cmd qemu-system-x86_64
if [ -d "$kernel" ]; then
	kernel=${kernel%/}
	image=$kernel/vmlinuz
	elf=$kernel/vmlinux
else
	image=$kernel
	elf=$kernel
fi
[ -f "$initrd" ] || fail "no initramfs at $initrd"

# pvh_image BZIMAGE: the path of its unpacked PVH-bootable ELF kernel in the
# cache, or nothing if it has none (either verdict is made once, atomically).
pvh_image()
{
	local entry stamp

	stamp="$(sha256sum "$1" | cut -d' ' -f1)  ${1##*/}"
	entry=$(cache_dir)/pvh/${stamp%% *}
	entry_lock "$entry"
	if ! entry_valid "$entry" "$stamp"; then
		entry_remove "$entry"
		entry_tmp "$entry"
		if ! bzimage_vmlinux "$1" "$ENTRY_TMP/vmlinux" ||
		   ! elf_has_pvh "$ENTRY_TMP/vmlinux"; then
			rm -f "$ENTRY_TMP/vmlinux"
		fi
		entry_commit "$entry" "$stamp"
	fi
	exec 9>&-
	if [ -f "$entry/vmlinux" ]; then
		printf '%s\n' "$entry/vmlinux"
	fi
}

if [ "$boot" != bzimage ] && [ -f "$elf" ] && elf_has_pvh "$elf"; then
	image=$elf
elif [ "$boot" != bzimage ] && [ -f "$image" ]; then
	pvh=$(pvh_image "$image") || pvh=''
	if [ -n "$pvh" ]; then
		image=$pvh
	elif [ "$boot" = pvh ]; then
		fail "$image has no PVH entry point"
	fi
fi
[ -f "$image" ] || fail "no kernel image at $image"

# The suite's arguments go on the kernel command line after " --", which the
# kernel passes to /init.  It splits at spaces and honours double quotes.
cmdline="console=ttyS0,115200 panic=-1 --"
for arg in "${suite_args[@]}"; do
	case $arg in
	*'"'* | *[[:cntrl:]]*) usage_error "suite argument cannot go on a kernel command line: '$arg'" ;;
	'' | *' '*) cmdline+=" \"$arg\"" ;;
	*) cmdline+=" $arg" ;;
	esac
done
[ ${#cmdline} -lt 2000 ] || usage_error "suite arguments too long for the kernel command line"

mkdir -p "$out"
console=$out/console.log
serial1=$out/serial1.log
results=$out/results.ktap

now_ms()
{
	local t=${EPOCHREALTIME/[.,]/}

	printf '%s\n' $((t / 1000))
}

qemu_pid=''
stop_qemu()
{
	local i

	[ -n "$qemu_pid" ] || return 0
	if kill -0 "$qemu_pid" 2>/dev/null; then
		kill -TERM "$qemu_pid" 2>/dev/null || true
		for ((i = 0; i < 20; i++)); do
			kill -0 "$qemu_pid" 2>/dev/null || break
			sleep "$POLL_S"
		done
		kill -KILL "$qemu_pid" 2>/dev/null || true
	fi
	qemu_pid=''
}
trap stop_qemu EXIT
trap 'stop_qemu; exit 3' INT TERM HUP

# Escape a path for a -chardev option value.
chardev_path()
{
	printf '%s\n' "${1//,/,,}"
}

start_qemu()
{
	local mode=$1 cpu=max

	[ "$mode" = kvm ] && cpu=host
	: >"$console"
	: >"$serial1"
	rm -f "$results"
	qemu-system-x86_64 \
		-nodefaults -display none -monitor none -no-reboot \
		-accel "$mode" -cpu "$cpu" -m "$memory" -smp "$smp" \
		-kernel "$image" -initrd "$initrd" -append "$cmdline" \
		-chardev "file,id=console,path=$(chardev_path "$console")" \
		-chardev "file,id=results,path=$(chardev_path "$serial1")" \
		-serial chardev:console -serial chardev:results \
		</dev/null >"$out/qemu.log" 2>&1 &
	qemu_pid=$!
	# Not a job: no "Killed" notices from bash; polled with kill -0.
	disown "$qemu_pid"
	started_ms=$(now_ms)
}

# ---- which accelerator ----------------------------------------------------

verdict_file=''
if [ "$accel" = auto ]; then
	accel=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		accel=kvm
		qver=$(qemu-system-x86_64 --version | head -n 1)
		qver=${qver##* version }
		qver=${qver%% *}
		verdict_file=$(cache_dir)/kvm-verdict/$(uname -r)_qemu-$qver
		if [ "$(cat "$verdict_file" 2>/dev/null)" = tcg ]; then
			log "KVM guests did not boot on this host before ($verdict_file): using TCG"
			accel=tcg
		fi
	fi
	probing=$([ "$accel" = kvm ] && echo 1 || echo 0)
else
	probing=0
	if [ "$accel" = kvm ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
		fail "--accel kvm: /dev/kvm is not usable"
	fi
fi

remember_verdict()
{
	[ -n "$verdict_file" ] || return 0
	mkdir -p "$(dirname "$verdict_file")"
	printf '%s\n' "$1" >"$verdict_file.tmp.$$"
	mv "$verdict_file.tmp.$$" "$verdict_file"
}

# ---- the run --------------------------------------------------------------

# extract_results: the lines between the markers into results.ktap.
extract_results()
{
	tr -d '\r' <"$serial1" | awk '
		/MODULE_ASYNC_END rc=/ { exit }
		on { print }
		/MODULE_ASYNC_BEGIN/ { on = 1 }' >"$results"
}

show_what_arrived()
{
	{
		echo "---- last lines of $console ----"
		tail -n 40 "$console" | tr -d '\r'
		echo "---- $serial1 ----"
		tr -d '\r' <"$serial1"
		echo "----"
	} >&2
}

deadline_ms=$(($(now_ms) + timeout * 1000))
log "booting $image under ${accel^^}"
start_qemu "$accel"
ended=0
while :; do
	if grep -aq 'MODULE_ASYNC_END rc=' "$serial1"; then
		ended=1
		break
	fi
	if [ "$probing" = 1 ]; then
		if grep -aq 'Linux version' "$console"; then
			probing=0
			remember_verdict kvm
		elif ! kill -0 "$qemu_pid" 2>/dev/null ||
		     [ $(($(now_ms) - started_ms)) -ge $((KVM_BOOT_BOUND_S * 1000)) ]; then
			if kill -0 "$qemu_pid" 2>/dev/null; then
				log "KVM guest printed nothing in ${KVM_BOOT_BOUND_S} s: falling back to TCG"
			else
				log "QEMU failed under KVM ($(tail -n 1 "$out/qemu.log")): falling back to TCG"
			fi
			stop_qemu
			remember_verdict tcg
			probing=0
			accel=tcg
			start_qemu tcg
			continue
		fi
	fi
	if ! kill -0 "$qemu_pid" 2>/dev/null; then
		# QEMU is gone: whatever it wrote is in the files now.
		qemu_pid=''
		grep -aq 'MODULE_ASYNC_END rc=' "$serial1" && ended=1
		break
	fi
	if [ "$(now_ms)" -ge "$deadline_ms" ]; then
		log "timeout: no end marker after ${timeout} s; stopping QEMU"
		stop_qemu
		show_what_arrived
		extract_results
		cat "$results"
		exit 3
	fi
	sleep "$POLL_S"
done

if [ "$ended" = 0 ]; then
	log "QEMU exited without the end marker (see $out/qemu.log)"
	cat "$out/qemu.log" >&2
	show_what_arrived
	extract_results
	exit 3
fi

# Everything the suite wrote precedes the end marker on the same channel, so
# it has all arrived.  Give the guest a moment to power off by itself.
if [ -n "$qemu_pid" ]; then
	bound_ms=$(($(now_ms) + POWEROFF_BOUND_S * 1000))
	while kill -0 "$qemu_pid" 2>/dev/null && [ "$(now_ms)" -lt "$bound_ms" ]; do
		sleep "$POLL_S"
	done
	kill -0 "$qemu_pid" 2>/dev/null && log "guest did not power off: stopping QEMU"
	stop_qemu
fi
elapsed_ms=$(($(now_ms) - started_ms))

extract_results
rc=$(tr -d '\r' <"$serial1" | sed -n 's/.*MODULE_ASYNC_END rc=\([0-9]*\).*/\1/p' | head -n 1)
cat "$results"
log "guest finished in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s under ${accel^^}: rc=$rc; $results, $console"

case $rc in
0|1|4) exit "$rc" ;;
126|127) fail "the suite could not run in the guest (rc=$rc)" ;;
'') fail "unreadable end marker" ;;
*) log "the suite exited with $rc: reporting a failure"; exit 1 ;;
esac
