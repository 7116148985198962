#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-boot.sh - one boot of the test VM, watched until it ends one way or
# another; vm-run.sh runs it once for each boot of a run.
#
# The guest (guest-init.sh) prints its console on ttyS0 and the suite's KTAP
# between MODULE_ASYNC_BEGIN and "MODULE_ASYNC_END rc=N" on ttyS1.  The end
# marker, not QEMU's exit, says the results are complete.  Markers are
# matched anywhere in a line (firmware escape codes can prefix one).  With
# --save or --restore, before BEGIN the guest says MODULE_ASYNC_READY and
# waits for the suite's arguments, which this script writes on ttyS1 (the
# guest's clock with them).  A boot with neither has them in its initramfs
# instead (qemu.sh's initrd_with_args, in DIR/boot.initrd while it runs):
# the guest asks for nothing, about 30 ms sooner under TCG.
#
# The guest's state at READY, before the suite has touched the kernel, is
# what a later boot of the run needs: with --save FILE it is saved there
# (qemu.sh: the guest stopped meanwhile), and a boot with --restore FILE
# starts QEMU from it instead of booting the kernel: the guest resumes at
# READY, waiting for its arguments.  A restore that fails (no FILE, QEMU
# refuses it, or it does not load in time) falls back to a fresh boot; the
# boot's document then starts with a line saying which way it began:
#   # boot K: restored from the state saved before the first case (S s)
#   # boot K: booted afresh (S s): WHY not restored
# S the time from starting QEMU to the guest waiting for its arguments.
#
# What the boot leaves in --out DIR, for boot K:
#   boot-K.ktap    what the suite printed between the markers
#   boot-K.record  one "key value" line each:
#     outcome      end (the end marker arrived), wedged (the suite reported
#                  a wedged kernel, then quiet without the end marker), died
#                  (QEMU exited without it), timeout (--timeout expired),
#                  silent (the suite never began)
#     rc           the end marker's exit status (empty without one)
#     began, wedged  1 if the suite began; if it reported a wedged kernel
#     accel        the accelerator the boot ran under (kvm or tcg)
#     start        restored (from --restore's file) or fresh (a boot)
#     ready        seconds from starting QEMU to the guest waiting for its
#                  arguments (empty if it never did)
#     saved        1 if --save's file holds the guest's state
#     console_off  where this boot's lines begin in console.log
#     seconds      how long the boot took
#   console.log    the boot's console, appended
#   serial1.log    the boot's results channel, appended
#   qemu.log       QEMU's own messages
# and while it runs serial1.boot.in, .out and qmp.in, .out: ttyS1 and the
# monitor (qemu.sh's qemu_start).

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/vm/qemu.sh
. "$TOOLS/vm/qemu.sh"
readonly KTAP=$TOOLS/ktap/ktap

readonly KVM_BOOT_BOUND_S=5	# a working KVM guest prints "Linux version" in < 1 s
readonly BEGIN_BOUND_S=120	# TCG reaches the suite in ~7 s; --timeout if shorter
# After a wedge the guest's end marker follows the driver's cleanup report
# (module_async.sh: one look, or 2 s for a killed runner's jobs) and the
# copy of the suite's output (guest-init.sh: 1 s at most), a few seconds
# under TCG: quiet this long without it, nothing more will come.
readonly DRAIN_MS=10000
# The KTAP reader runs at most once in NOTE_MS while lines arrive, and
# once at the end: on 2 cores each run takes the guest's
# CPU (under TCG the probe case took 105 ms with a run at each verdict, 70
# without).  A verdict's time is its line's arrival all the same.
readonly NOTE_MS=1000
# The results channel is a file the watch reads every POLL_S: the guest's
# READY waits for it, so each step costs the run up to that much.
readonly POLL_S=0.02

usage()
{
	cat <<EOF
Usage: $PROG --image FILE --initrd FILE --out DIR --boot K --accel A
       [--timeout S] [--memory M] [--smp N] [--note TEXT]
       [--save FILE | --restore FILE] [-- ARGS]

Boot the test VM once, watch it, and write DIR/boot-K.ktap and
DIR/boot-K.record (see the top of this file).

  --image FILE    the kernel image QEMU boots (-kernel)
  --initrd FILE   the initramfs (tools/vm/mkinitramfs.sh)
  --out DIR       where the boot's files go
  --boot K        the boot's number in its run
  --accel A       kvm, tcg, or probe (KVM, TCG if its guest stays silent)
  --timeout S     watchdog on the boot, in seconds (default 300)
  --memory M      guest memory (default 1G)
  --smp N         guest CPUs (default 2)
  --note TEXT     said in the log line of the boot's start
  --save FILE     save the guest's state to FILE before the suite begins
  --restore FILE  start from the state in FILE, else boot afresh
  --help          show this help
  -- ARGS         the suite's arguments, for the guest

Exit status: 0 when the boot's outcome is recorded, 2 usage, 3 otherwise.
EOF
}

image='' initrd='' out='' boot='' accel='' timeout=300 memory=1G smp=2 note=''
save='' restore='' suite_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--image) need_arg "$1" $#; image=$2; shift 2 ;;
	--initrd) need_arg "$1" $#; initrd=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	--boot) need_arg "$1" $#; boot=$2; shift 2 ;;
	--accel) need_arg "$1" $#; accel=$2; shift 2 ;;
	--timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
	--memory) need_arg "$1" $#; memory=$2; shift 2 ;;
	--smp) need_arg "$1" $#; smp=$2; shift 2 ;;
	--note) need_arg "$1" $#; note=$2; shift 2 ;;
	--save) need_arg "$1" $#; save=$2; shift 2 ;;
	--restore) need_arg "$1" $#; restore=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; suite_args=("$@"); break ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
if [ -z "$image" ] || [ -z "$initrd" ] || [ -z "$out" ]; then
	usage_error "--image, --initrd and --out are required"
fi
[[ $boot =~ ^[1-9][0-9]*$ ]] || usage_error "bad --boot '$boot'"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || usage_error "bad --timeout '$timeout'"
case $accel in
kvm|tcg|probe) ;;
*) usage_error "bad --accel '$accel' (kvm, tcg or probe)" ;;
esac
[ -z "$save" ] || [ -z "$restore" ] || usage_error "--save and --restore exclude each other"
[ -z "$restore" ] || [ "$accel" != probe ] ||
	usage_error "--restore wants the accelerator the state was saved under"

console=$out/console.log
serial1=$out/serial1.log
channel=$out/serial1.boot	# ttyS1: .out the guest's results, .in to it
qmp=$out/qmp			# the monitor: .in commands, .out replies
results=$channel.out
state=${save:-$restore}
doc=$out/boot-$boot.ktap
record=$out/boot-$boot.record
console_off=$(stat -c %s "$console" 2>/dev/null || echo 0)

# now: the time in ms in $NOW (no subshell: it is called in every poll).
now()
{
	local t=${EPOCHREALTIME/[.,]/}

	NOW=$((t / 1000))
}

# secs MS: milliseconds as seconds, e.g. 1.234.
secs()
{
	printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

# The boot's state, as the watch loop below finds it.
qemu_pid='' started_ms=0 saw_ready=0 saw_begin=0 saw_end=0 saw_wedge=0 guest_rc=''
saw_not_ok=0 note_ms=0 scanned=0 line_text=() line_ms=()
partial='' last_line_ms=0 prev_ms=0 logged=0 new_lines=0 results_fd='' to_guest=''
how=fresh ready='' saved=0 not_restored=''
stopped_ms=0	# the guest stood stopped for its save: not counted in its bounds

cleanup()
{
	qemu_stop "$qemu_pid"
	rm -f "$channel.in" "$channel.out" "$qmp.in" "$qmp.out" "$out/boot.initrd"
}
trap cleanup EXIT
trap 'cleanup; exit 3' INT TERM HUP

# start ACCEL [restore]: a fresh guest, or with "restore" one from the state
# in $state; its console from where this boot began.
start()
{
	[ -z "$results_fd" ] || exec {results_fd}<&-
	[ -z "$to_guest" ] || exec {to_guest}>&-
	truncate -s "$console_off" "$console"
	: >"$doc"
	logged=0 saw_not_ok=0 note_ms=0 scanned=0 line_text=() line_ms=()
	qemu_pid=$(qemu_start "$1" "$image" "$initrd" "$console" "$channel" "$qmp" \
		"$out/qemu.log" "$memory" "$smp" "$state" "${2:-}")
	exec {results_fd}<"$results" {to_guest}<>"$channel.in"
	now
	started_ms=$NOW
	stopped_ms=0
}

# resume: start the guest from the state in $restore, else (saying why)
# boot it afresh.
resume()
{
	local why="no saved state"

	if [ -s "$restore" ]; then
		start "$accel" restore
		if why=$("$TOOLS/vm/qmp" restore "$qmp" "$qemu_pid"); then
			how=restored
			guest_ready
			return
		fi
		why="the restore failed: $why"
		qemu_alive "$qemu_pid" || why+=" ($(tail -n 1 "$out/qemu.log"))"
		qemu_stop "$qemu_pid"
	fi
	not_restored=$why
	log "boot $boot: $why: booting afresh"
	start "$accel"
}

# guest_ready: the guest waits for its arguments (it said so, or it was
# restored): save its state if asked to, then send them.
guest_ready()
{
	local size t0 why

	saw_ready=1
	if [ -n "$save" ]; then
		now
		t0=$NOW
		if why=$("$TOOLS/vm/qmp" save "$qmp" "$qemu_pid"); then
			saved=1
			size=$(du -m "$save" | cut -f1)
			now
			log "boot $boot: the guest's state saved in $(secs $((NOW - t0))) s" \
				"(${size} MB): later boots restore it"
		else
			rm -f "$save"
			log "boot $boot: could not save the guest's state ($why):" \
				"later boots boot afresh"
		fi
		now
		stopped_ms=$((NOW - t0))
	fi
	now
	ready=$(secs $((NOW - started_ms - stopped_ms)))
	if [ -n "$restore" ]; then
		if [ "$how" = restored ]; then
			echo "# boot $boot: restored from the state saved before the first case" \
				"($ready s)"
		else
			echo "# boot $boot: booted afresh ($ready s): $not_restored"
		fi >>"$doc"
		log "boot $boot: ${how/fresh/booted afresh}: the guest waits for its arguments" \
			"after $ready s"
	fi
	{
		echo "MODULE_ASYNC_ARGS ${EPOCHREALTIME%[.,]*} ${#suite_args[@]}"
		[ ${#suite_args[@]} -eq 0 ] || printf '%s\n' "${suite_args[@]}"
	} >&"$to_guest"
}

# handle_line LINE: one line of the results channel.
handle_line()
{
	local line=${1%$'\r'}

	if [ "$saw_begin" = 0 ]; then
		if [ "$saw_ready" = 0 ] && [[ $line == *MODULE_ASYNC_READY* ]]; then
			guest_ready
		elif [[ $line == *MODULE_ASYNC_BEGIN* ]]; then
			saw_begin=1
			prev_ms=$NOW
			log "boot $boot: the suite began after $(secs $((NOW - started_ms))) s"
		fi
		return 0
	fi
	if [[ $line =~ MODULE_ASYNC_END\ rc=([0-9]+) ]]; then
		saw_end=1
		guest_rc=${BASH_REMATCH[1]}
		return 0
	fi
	printf '%s\n' "$line" >>"$doc"
	line_text+=("$line")
	line_ms+=("$NOW")
	last_line_ms=$NOW
	new_lines=1
}

# note_doc: after new lines, log the time to each new verdict (from its
# line's arrival) and notice a wedged kernel, from the boot's document as
# the KTAP reader reads it, at the lowest priority.  A wedge follows a not
# ok: only then is it looked for.
note_doc()
{
	local verdicts i j t wedger

	new_lines=0
	note_ms=$NOW
	mapfile -t verdicts < <(nice -n 19 "$KTAP" results "$doc")
	for ((i = logged; i < ${#verdicts[@]}; i++)); do
		t=$NOW
		for ((j = scanned; j < ${#line_text[@]}; j++)); do
			[ "${line_text[j]}" != "${verdicts[i]}" ] && continue
			t=${line_ms[j]}
			scanned=$((j + 1))
			break
		done
		log "boot $boot: $(secs $((t - prev_ms))) s to verdict: ${verdicts[i]:0:100}"
		prev_ms=$t
		[[ ${verdicts[i]} != "not ok"* ]] || saw_not_ok=1
	done
	logged=${#verdicts[@]}
	if [ "$saw_wedge" = 0 ] && [ "$saw_not_ok" = 1 ] &&
	   wedger=$(nice -n 19 "$KTAP" wedged "$doc"); then
		saw_wedge=1
		log "boot $boot: the suite reports a wedged kernel: kernel wedged by $wedger"
	fi
}

# read_new: the lines that arrived on the results channel since last time
# (a line still being written waits in $partial).
read_new()
{
	local line

	now
	while IFS= read -r -u "$results_fd" line; do
		handle_line "$partial$line"
		partial=''
	done
	partial+=$line
	[ "$new_lines" = 0 ] || [ $((NOW - note_ms)) -lt "$NOTE_MS" ] || note_doc
}

# kvm_probe: under probe, whether the KVM guest spoke within its bound;
# if it did not, the boot starts again under TCG (and the verdict is kept).
kvm_probe()
{
	if grep -aq 'Linux version' "$console"; then
		accel=kvm
		kvm_remember kvm
	elif ! qemu_alive "$qemu_pid" ||
	     [ $((NOW - started_ms)) -ge $((KVM_BOOT_BOUND_S * 1000)) ]; then
		if qemu_alive "$qemu_pid"; then
			log "KVM guest printed nothing in ${KVM_BOOT_BOUND_S} s:" \
				"falling back to TCG"
		else
			log "QEMU failed under KVM ($(tail -n 1 "$out/qemu.log")):" \
				"falling back to TCG"
		fi
		qemu_stop "$qemu_pid"
		kvm_remember tcg
		accel=tcg
		start tcg
	fi
}

# watch: until the boot ends one way or another; prints the outcome.
watch()
{
	local begin_s=$((timeout < BEGIN_BOUND_S ? timeout : BEGIN_BOUND_S))

	while :; do
		read_new
		[ "$saw_end" = 0 ] || { echo end; return; }
		[ "$accel" != probe ] || kvm_probe
		if ! qemu_alive "$qemu_pid"; then
			# QEMU is gone: whatever it wrote is in the files now.
			read_new
			[ -z "$partial" ] || handle_line "$partial"
			partial=''
			[ "$new_lines" = 0 ] || note_doc
			if [ "$saw_end" = 1 ]; then
				echo end
			elif [ "$saw_wedge" = 1 ]; then
				echo wedged
			elif [ "$saw_begin" = 1 ]; then
				echo died
			else
				echo silent
			fi
			return
		fi
		if [ "$saw_wedge" = 1 ] && [ $((NOW - last_line_ms)) -ge "$DRAIN_MS" ]; then
			log "boot $boot: no end marker $(secs "$DRAIN_MS") s after the wedge:" \
				"taking what arrived"
			echo wedged
			return
		fi
		if [ "$saw_begin" = 0 ] &&
		   [ $((NOW - started_ms - stopped_ms)) -ge $((begin_s * 1000)) ]; then
			echo silent
			return
		fi
		[ $((NOW - started_ms - stopped_ms)) -lt $((timeout * 1000)) ] ||
			{ echo timeout; return; }
		nap "$POLL_S"
	done
}

mkdir -p "$out"
touch "$console" "$serial1"
qemu_guard
if [ -z "$state" ]; then
	initrd_with_args "$initrd" "$out/boot.initrd" ${suite_args[@]+"${suite_args[@]}"}
	initrd=$out/boot.initrd
fi
log "boot $boot: booting $image under $([ "$accel" = tcg ] && echo TCG || echo KVM)$note"
if [ -n "$restore" ]; then
	resume
else
	start "$([ "$accel" = tcg ] && echo tcg || echo kvm)"
fi
# watch's outcome, and the state it leaves in this shell: not in a $(...).
watch >"$record.outcome"
outcome=$(cat "$record.outcome")
rm -f "$record.outcome"
# Whatever the outcome, everything the boot will say is in (the end marker
# follows the suite's last line; a wedged or dead guest says no more): QEMU
# is stopped now.  A guest that ended cleanly would power off by itself
# (guest-init.sh), 1.5 s more under TCG that no result waits for.
qemu_stop "$qemu_pid"
read_new
[ "$new_lines" = 0 ] || note_doc
exec {results_fd}<&-
cat "$results" >>"$serial1"
now
[ "$accel" != probe ] || accel=kvm
log "boot $boot: $outcome${guest_rc:+ (rc=$guest_rc)}" \
	"after $(secs $((NOW - started_ms))) s under ${accel^^}"
printf '%s %s\n' outcome "$outcome" rc "$guest_rc" began "$saw_begin" wedged "$saw_wedge" \
	accel "$accel" console_off "$console_off" \
	seconds "$(secs $((NOW - started_ms)))" start "$how" ready "$ready" \
	saved "$saved" >"$record"
