#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel and a tools/vm/mkinitramfs.sh initramfs in QEMU, watch the run
# and collect the suite's results.
#
# The guest (tools/vm/guest-init.sh) prints its console on ttyS0 and the suite's
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
# A deadlock is a verdict, not the end of the run.  When a case wedges the
# kernel for good, the runner says so ("# kernel wedged by CASE", the cases
# left over "SKIP kernel wedged by CASE") and the guest cannot even power
# off: once everything it printed has arrived (its end marker, or
# DRAIN_MS of quiet after the wedge), QEMU is killed and a fresh VM runs the
# cases left over (the same suite arguments plus "--case NAME" for each).
# A guest that dies otherwise (panic, an oops that kills init, no end marker
# within --timeout, a suite that exits without reporting every case) gets
# "not ok N CASE # ERROR why" for the case that was running, with the
# console's last kernel lines, and the run goes on in a fresh VM too.  The
# case that was running is the first of the planned order without a result;
# the order comes from the runner's --list (the runner in the initramfs,
# /opt/module_async/module_async, run here on the host) or from --cases.
# At most one boot more than there are cases, and none after a boot in which
# no case got a verdict.  The KTAP reader (tools/ktap/ktap) reads every
# boot's document, and its merge makes one document of them: the first
# boot's plan and order, every case once.
#
# Exit status, from that document: 0 nothing failed, 1 a case failed, 4 all
# skipped (with one boot: the guest suite's own exit status); 2 bad usage;
# 3 infrastructure failure (QEMU failed, the first guest never started the
# suite, a dead guest's running case cannot be named).  On a failure, what
# the suite printed so far is still written to results.ktap and stdout.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
readonly KTAP=$TOOLS/ktap/ktap

KVM_BOOT_BOUND_S=5	# a working KVM guest prints "Linux version" in < 1 s
BEGIN_BOUND_S=120	# TCG reaches the suite in ~7 s; --timeout if shorter
POWEROFF_BOUND_MS=2000	# the results are complete: do not wait for sysrq
DRAIN_MS=3000		# quiet after a wedge without the end marker: all is in
CONSOLE_LINES=20	# kernel lines quoted for a guest that died
POLL_S=0.1

usage()
{
	cat <<EOF
Usage: $PROG --kernel ENTRY_OR_BZIMAGE --initrd FILE --out DIR [options] [-- suite args]

Boot the module_async test VM in QEMU and print the suite's KTAP.

  --kernel K      kernel entry directory (its vmlinuz is booted) or a bzImage
  --initrd FILE   initramfs from tools/vm/mkinitramfs.sh
  --out DIR       writes DIR/results.ktap (the suite's KTAP, one document
                  for all boots), DIR/console.log (the serial console) and
                  DIR/serial1.log (raw results channel) of every boot, and
                  DIR/boot-K.ktap (boot K's own KTAP) if there were several
  --timeout S     watchdog on each boot, in seconds (default 300)
  --cases FILE    the cases in run order, one a line (first word; e.g. the
                  runner's --list); default: the initramfs runner's --list
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
cases_file=''
suite_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need_arg "$1" $#; kernel=$2; shift 2 ;;
	--initrd) need_arg "$1" $#; initrd=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	--timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
	--cases) need_arg "$1" $#; cases_file=$2; shift 2 ;;
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

need_cmd qemu-system-x86_64
if [ -d "$kernel" ]; then
	kernel=${kernel%/}
	image=$kernel/vmlinuz
	elf=$kernel/vmlinux
else
	image=$kernel
	elf=$kernel
fi
[ -f "$initrd" ] || die "no initramfs at $initrd"
[ -z "$cases_file" ] || [ -r "$cases_file" ] || die "cannot read --cases $cases_file"

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
		die "$image has no PVH entry point"
	fi
fi
[ -f "$image" ] || die "no kernel image at $image"

# kernel_cmdline ARGS...: the suite's arguments go on the kernel command
# line (in $cmdline) after " --", which the kernel passes to /init.  It
# splits at spaces and honours double quotes.
kernel_cmdline()
{
	local arg

	cmdline="console=ttyS0,115200 panic=-1 --"
	for arg in "$@"; do
		case $arg in
		*'"'* | *[[:cntrl:]]*)
			usage_error "suite argument cannot go on a kernel command line: '$arg'" ;;
		'' | *' '*) cmdline+=" \"$arg\"" ;;
		*) cmdline+=" $arg" ;;
		esac
	done
	[ ${#cmdline} -lt 2000 ] ||
		usage_error "suite arguments too long for the kernel command line"
}
kernel_cmdline "${suite_args[@]}"

mkdir -p "$out"
console=$out/console.log
serial1=$out/serial1.log
results=$out/results.ktap
boot_serial1=$out/serial1.boot.log
rm -f "$out"/boot-[0-9]*.ktap

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

# start_qemu MODE: boot the guest; its console is appended to console.log
# (truncated to where this boot began), its results channel written to
# $boot_serial1 (appended to serial1.log when the boot is over).
start_qemu()
{
	local mode=$1 cpu=max

	[ "$mode" = kvm ] && cpu=host
	truncate -s "$console_off" "$console"
	: >"$boot_serial1"
	qemu-system-x86_64 \
		-nodefaults -display none -monitor none -no-reboot \
		-accel "$mode" -cpu "$cpu" -m "$memory" -smp "$smp" \
		-kernel "$image" -initrd "$initrd" -append "$cmdline" \
		-chardev "file,id=console,path=$(chardev_path "$console"),append=on" \
		-chardev "file,id=results,path=$(chardev_path "$boot_serial1")" \
		-serial chardev:console -serial chardev:results \
		</dev/null >"$out/qemu.log" 2>&1 &
	qemu_pid=$!
	# Not a job: no "Killed" notices from bash; polled with kill -0.
	disown "$qemu_pid"
	now
	started_ms=$NOW
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
		die "--accel kvm: /dev/kvm is not usable"
	fi
fi

remember_verdict()
{
	[ -n "$verdict_file" ] || return 0
	mkdir -p "$(dirname "$verdict_file")"
	printf '%s\n' "$1" >"$verdict_file.tmp.$$"
	mv "$verdict_file.tmp.$$" "$verdict_file"
}

# ---- one boot ---------------------------------------------------------------

# What a boot leaves, set by watch_boot:
#   outcome    end (the end marker arrived), wedged (a wedge, then quiet
#              without the end marker), died (QEMU exited without it),
#              timeout (--timeout expired), silent (the suite never began)
#   guest_rc   the end marker's exit status
#   saw_begin, saw_wedge   the suite began; it reported a wedged kernel
#   boot_doc   the boot's KTAP: what the suite printed between the markers
#   logged     how many of boot_doc's verdicts have been logged
boot=0 outcome='' guest_rc='' saw_begin=0 saw_end=0 saw_wedge=0
boot_doc='' console_off=0 partial='' last_line_ms=0 prev_ms=0 logged=0 new_lines=0

# handle_line LINE: one line of the results channel.
handle_line()
{
	local line=${1%$'\r'}

	if [ "$saw_begin" = 0 ]; then
		if [[ $line == *MODULE_ASYNC_BEGIN* ]]; then
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
	printf '%s\n' "$line" >>"$boot_doc"
	last_line_ms=$NOW
	new_lines=1
	return 0
}

# note_doc: after new lines, log the time to each new verdict and notice a
# wedged kernel, from the boot's document as the KTAP reader reads it.
note_doc()
{
	local verdicts i wedger

	new_lines=0
	mapfile -t verdicts < <("$KTAP" results "$boot_doc")
	for ((i = logged; i < ${#verdicts[@]}; i++)); do
		log "boot $boot: $(secs $((NOW - prev_ms))) s to verdict: ${verdicts[i]:0:100}"
		prev_ms=$NOW
	done
	logged=${#verdicts[@]}
	if [ "$saw_wedge" = 0 ] && wedger=$("$KTAP" wedged "$boot_doc"); then
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
	while IFS= read -r -u "$serial1_fd" line; do
		handle_line "$partial$line"
		partial=''
	done
	partial+=$line
	[ "$new_lines" = 0 ] || note_doc
}

# watch_boot: start a guest and watch it until it ends one way or another
# (see outcome above); QEMU is stopped when this returns.
watch_boot()
{
	local deadline_ms begin_ms bound_ms begin_s

	outcome='' guest_rc='' saw_begin=0 saw_end=0 saw_wedge=0 partial='' logged=0
	: >"$boot_doc"
	: >"$boot_serial1"
	exec {serial1_fd}<"$boot_serial1"
	log "boot $boot: booting $image under ${accel^^}${boot_args_note}"
	start_qemu "$accel"
	begin_s=$((timeout < BEGIN_BOUND_S ? timeout : BEGIN_BOUND_S))
	deadline_ms=$((started_ms + timeout * 1000))
	begin_ms=$((started_ms + begin_s * 1000))
	while :; do
		read_new
		if [ "$saw_end" = 1 ]; then
			outcome=end
			break
		fi
		if [ "$probing" = 1 ]; then
			if grep -aq 'Linux version' "$console"; then
				probing=0
				remember_verdict kvm
			elif ! kill -0 "$qemu_pid" 2>/dev/null ||
			     [ $((NOW - started_ms)) -ge $((KVM_BOOT_BOUND_S * 1000)) ]; then
				if kill -0 "$qemu_pid" 2>/dev/null; then
					log "KVM guest printed nothing in ${KVM_BOOT_BOUND_S} s:" \
						"falling back to TCG"
				else
					log "QEMU failed under KVM" \
						"($(tail -n 1 "$out/qemu.log")):" \
						"falling back to TCG"
				fi
				stop_qemu
				remember_verdict tcg
				probing=0
				accel=tcg
				exec {serial1_fd}<&-
				: >"$boot_doc"
				logged=0
				exec {serial1_fd}<"$boot_serial1"
				start_qemu tcg
				deadline_ms=$((started_ms + timeout * 1000))
				begin_ms=$((started_ms + begin_s * 1000))
				continue
			fi
		fi
		if ! kill -0 "$qemu_pid" 2>/dev/null; then
			# QEMU is gone: whatever it wrote is in the files now.
			qemu_pid=''
			read_new
			[ -z "$partial" ] || handle_line "$partial"
			partial=''
			[ "$new_lines" = 0 ] || note_doc
			if [ "$saw_end" = 1 ]; then
				outcome=end
			elif [ "$saw_wedge" = 1 ]; then
				outcome=wedged
			elif [ "$saw_begin" = 1 ]; then
				outcome=died
			else
				outcome=silent
			fi
			break
		fi
		if [ "$saw_wedge" = 1 ] && [ $((NOW - last_line_ms)) -ge "$DRAIN_MS" ]; then
			log "boot $boot: no end marker $(secs "$DRAIN_MS") s after the wedge:" \
				"taking what arrived"
			outcome=wedged
			break
		fi
		if [ "$saw_begin" = 0 ] && [ "$NOW" -ge "$begin_ms" ]; then
			outcome=silent
			break
		fi
		if [ "$NOW" -ge "$deadline_ms" ]; then
			outcome=timeout
			break
		fi
		sleep "$POLL_S"
	done
	# After a clean run the guest powers off by itself: let it, briefly.
	# After a wedge it cannot, and everything is in: no need to wait.
	if [ "$outcome" = end ] && [ "$saw_wedge" = 0 ] && [ -n "$qemu_pid" ]; then
		bound_ms=$((NOW + POWEROFF_BOUND_MS))
		while kill -0 "$qemu_pid" 2>/dev/null && [ "$NOW" -lt "$bound_ms" ]; do
			sleep "$POLL_S"
			now
		done
		kill -0 "$qemu_pid" 2>/dev/null &&
			log "boot $boot: the guest did not power off: stopping QEMU"
	fi
	stop_qemu
	read_new
	exec {serial1_fd}<&-
	cat "$boot_serial1" >>"$serial1"
	rm -f "$boot_serial1"
	now
	log "boot $boot: $outcome${guest_rc:+ (rc=$guest_rc)}" \
		"after $(secs $((NOW - started_ms))) s under ${accel^^}"
}

# ---- the cases and the boots ----------------------------------------------

# The planned order (every case of the run, first boot's order), once known.
planned=()
planned_known=0

# base_args: the suite arguments without any --case (resumed boots name
# their cases themselves); wanted: the cases those --case options named.
base_args=() wanted=()
set -- "${suite_args[@]}"
while [ $# -gt 0 ]; do
	case $1 in
	--case|-c) [ $# -ge 2 ] && wanted+=("$2"); shift 2 || shift ;;
	--case=*) wanted+=("${1#--case=}"); shift ;;
	*) base_args+=("$1"); shift ;;
	esac
done

# list_cases: the runner's --list, one case a line, from --cases or from the
# runner in the initramfs (run here: --list touches no kernel).
list_cases()
{
	local tmpd rc=0

	if [ -n "$cases_file" ]; then
		cat "$cases_file"
		return
	fi
	tmpd=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
	# shellcheck disable=SC2016 # the inner shell expands them
	{ case $(od -An -tx1 -N2 "$initrd" | tr -d ' \n') in
	  1f8b) gzip -dc "$initrd" ;;
	  28b5) zstd -dc "$initrd" ;;
	  fd37) xz -dc "$initrd" ;;
	  *) cat "$initrd" ;;
	  esac | (cd "$tmpd" && cpio -id --quiet opt/module_async/module_async 2>/dev/null)
	} || true
	if [ -x "$tmpd/opt/module_async/module_async" ]; then
		timeout 10 "$tmpd/opt/module_async/module_async" --list \
			"${base_args[@]}" </dev/null || rc=$?
	else
		rc=1
	fi
	rm -rf "$tmpd"
	return "$rc"
}

# need_planned: fill $planned from the runner's list (restricted to the
# cases the arguments asked for); fails if there is no list.
need_planned()
{
	local name w

	[ "$planned_known" = 0 ] || return 0
	planned=()
	while read -r name _; do
		[ -n "$name" ] || continue
		if [ ${#wanted[@]} -gt 0 ]; then
			for w in "${wanted[@]}"; do
				[ "$w" != "$name" ] || { planned+=("$name"); break; }
			done
		else
			planned+=("$name")
		fi
	done < <(list_cases 2>/dev/null)
	[ ${#planned[@]} -gt 0 ] || return 1
	planned_known=1
}

# doc_scan FILE: the boot's results: $doc_names (every named result, in
# order), $doc_skipped (those skipped because of a wedge), $doc_plan.
doc_scan()
{
	local line name

	doc_names=()
	doc_plan=$("$KTAP" plan "$1") || doc_plan=''
	while IFS= read -r line; do
		# "<n> <case> <verdict>"
		line=${line#* }
		name=${line% *}
		[ "$name" = '(unnamed)' ] || doc_names+=("$name")
	done < <("$KTAP" verdicts "$1")
	mapfile -t doc_skipped < <("$KTAP" leftover "$1")
}

# in_list WORD LIST...: WORD is one of LIST.
in_list()
{
	local w=$1 x

	shift
	for x in "$@"; do
		[ "$x" != "$w" ] || return 0
	done
	return 1
}

# died_why: why the guest ended without reporting every case.
died_why()
{
	local panic
	local crash='Kernel panic - not syncing: |BUG: |Oops: |general protection fault'

	case $outcome in
	timeout) printf 'no end marker within %s s (boot %s)\n' "$timeout" "$boot" ;;
	silent)
		printf 'the fresh VM (boot %s) did not start the suite: the case did not run\n' \
			"$boot" ;;
	end) printf 'the suite exited (rc=%s) without reporting it\n' "$guest_rc" ;;
	*)
		panic=$(tail -c +$((console_off + 1)) "$console" | tr -d '\r' |
			grep -aoE "($crash).*" |
			tail -n 1) || true
		printf 'guest died: %s\n' "${panic:-QEMU exited without the end marker}"
		;;
	esac
}

# console_excerpt: CONSOLE_LINES kernel lines of this boot's console: from
# just before the first oops or panic if there is one, else the last ones.
console_excerpt()
{
	tail -c +$((console_off + 1)) "$console" | tr -d '\r' |
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' |
		grep -aE '^[[:space:]]*\[[[:space:]]*[0-9]+\.[0-9]+\]' |
		awk -v max="$CONSOLE_LINES" '
		{ line[NR] = $0 }
		!first && (/Kernel panic - not syncing|BUG: |Oops: / ||
			   /general protection fault/) { first = NR }
		END {
			from = first ? (first > 2 ? first - 2 : 1) : (NR > max ? NR - max + 1 : 1)
			for (i = from; i <= NR && i < from + max; i++) print line[i]
		}'
}

# complete_doc CASE WHY: a boot that ended without reporting CASE (the one
# that was running) gets "not ok N CASE # ERROR WHY" with the console's
# last kernel lines, and a plan if the suite never printed one.
complete_doc()
{
	local case=$1 why=$2 nplan

	if [ -z "$doc_plan" ]; then
		nplan=${#boot_cases[@]}
		[ "$nplan" -gt 0 ] || nplan=${#planned[@]}
		{
			echo "TAP version 13"
			echo "1..$nplan"
			"$KTAP" body "$boot_doc"
		} >"$boot_doc.new"
		mv "$boot_doc.new" "$boot_doc"
	fi
	{
		echo "# $case: $why; the kernel's console (boot $boot):"
		console_excerpt | sed 's/^/# console: /'
		echo "not ok $((${#doc_names[@]} + 1)) $case # ERROR $why"
	} >>"$boot_doc"
	log "boot $boot: not ok $case # ERROR $why"
}

# ---- the run --------------------------------------------------------------

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

: >"$console"
: >"$serial1"
rm -f "$results"
declare -A final=()
boot_cases=("${wanted[@]}")	# what this boot runs (empty: everything)
boot_args=("${suite_args[@]}")
boot_args_note=''
max_boots=0 infra='' boots_done=0
while :; do
	boot=$((boot + 1))
	boot_doc=$out/boot-$boot.ktap
	console_off=$(stat -c %s "$console")
	kernel_cmdline "${boot_args[@]}"
	watch_boot
	boots_done=$boot
	doc_scan "$boot_doc"

	if [ "$boot" = 1 ] && [ "$saw_begin" = 0 ]; then
		if [ ! -s "$console" ]; then
			infra="QEMU failed (see $out/qemu.log): $(tail -n 1 "$out/qemu.log")"
		else
			infra="the guest did not start the suite"
			infra+=" ($outcome after $(secs $((NOW - started_ms))) s)"
		fi
		break
	fi
	if [ "$boot" = 1 ]; then
		if [ -n "$doc_plan" ]; then
			max_boots=$((doc_plan + 1))
		elif need_planned; then
			max_boots=$((${#planned[@]} + 1))
		fi
		if [ -z "$doc_plan" ] && [ "$outcome" = end ] && [ "$saw_wedge" = 0 ]; then
			case $guest_rc in
			126|127) infra="the suite could not run in the guest (rc=$guest_rc)" ;;
			esac
			[ -z "$infra" ] || break
		fi
	fi

	progress=0
	for name in "${doc_names[@]}"; do
		in_list "$name" "${doc_skipped[@]}" && continue
		[ -n "${final[$name]:-}" ] || progress=1
		final[$name]=1
	done

	# A clean end with every planned case reported: done.
	if [ "$outcome" = end ] && [ "$saw_wedge" = 0 ] &&
	   { [ -z "$doc_plan" ] || [ "${#doc_names[@]}" -ge "$doc_plan" ]; }; then
		break
	fi

	if [ "$saw_wedge" = 0 ]; then
		# The guest (or the suite) died: blame the case that was running.
		if ! need_planned; then
			infra="cannot name the case that was running in boot $boot"
			infra+=" (no case list: pass --cases)"
			show_what_arrived
			break
		fi
		running=''
		for name in "${planned[@]}"; do
			if [ -z "${final[$name]:-}" ] && ! in_list "$name" "${doc_names[@]}"; then
				running=$name
				break
			fi
		done
		if [ -z "$running" ]; then
			log "boot $boot: $outcome, but every case has a verdict"
			break
		fi
		complete_doc "$running" "$(died_why)"
		final[$running]=1
		progress=1
	fi

	# The cases left over: the planned ones without a verdict, else those
	# the wedge made the suite skip.
	remaining=()
	if [ "$planned_known" = 1 ] || { [ "$outcome" != end ] && need_planned; }; then
		for name in "${planned[@]}"; do
			[ -n "${final[$name]:-}" ] || remaining+=("$name")
		done
	else
		remaining=("${doc_skipped[@]}")
	fi
	[ ${#remaining[@]} -gt 0 ] || break
	if [ "$progress" = 0 ]; then
		log "boot $boot: no case got a verdict: not booting again"
		break
	fi
	if [ "$max_boots" -gt 0 ] && [ "$boot" -ge "$max_boots" ]; then
		log "boot $boot: $max_boots boots are the most a run may take"
		break
	fi
	boot_cases=("${remaining[@]}")
	boot_args=("${base_args[@]}")
	for name in "${remaining[@]}"; do
		boot_args+=(--case "$name")
	done
	boot_args_note=" (a fresh VM for the cases left over: ${remaining[*]})"
	printf '==== vm-run.sh: boot %d, a fresh VM: %s ====\n' "$((boot + 1))" "${boot_args[*]}" |
		tee -a "$console" >>"$serial1"
done

if [ "$boots_done" = 1 ] && [ "$outcome" = end ] && [ "$saw_wedge" = 0 ] && [ -z "$infra" ]; then
	# One clean boot: its document and its exit status, as they are.
	mv "$boot_doc" "$results"
	cat "$results"
	log "guest finished: rc=$guest_rc; $results, $console"
	case $guest_rc in
	0|1|4) exit "$guest_rc" ;;
	126|127) die "the suite could not run in the guest (rc=$guest_rc)" ;;
	*) log "the suite exited with $guest_rc: reporting a failure"; exit 1 ;;
	esac
fi

if [ "$boots_done" = 1 ] && [ -n "$infra" ]; then
	[ "$saw_begin" = 1 ] || show_what_arrived
	mv "$boot_doc" "$results"
	cat "$results"
	die "$infra"
fi

docs=()
for ((k = 1; k <= boots_done; k++)); do
	docs+=("$out/boot-$k.ktap")
done
status=0
"$KTAP" merge "${docs[@]}" >"$results" || status=$?
[ "$boots_done" -gt 1 ] || rm -f "${docs[@]}"
cat "$results"
log "$boots_done boot(s); $results, $console"
[ -z "$infra" ] || die "$infra"
case $status in
0|1|4) exit "$status" ;;
*) die "could not merge the boots' documents (ktap merge exit $status)" ;;
esac
