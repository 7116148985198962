#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh - boot a kernel and a tools/vm/mkinitramfs.sh initramfs in QEMU
# (qemu.sh), watch each boot (vm-boot.sh) and collect the suite's results,
# resuming in new VMs after a wedge or a dead guest.
#
# Each boot gives the guest the suite's arguments (vm-boot.sh,
# guest-init.sh).  Where a case may wedge the kernel (the suite's
# --allow-deadlock, or getopt's abbreviation of it), the first boot saves
# the guest's state before the suite has touched the kernel ($STATE_FILE in
# --out, removed when the run ends), and each later boot starts from it
# instead of booting the kernel again, its arguments (its cases) sent on
# the results channel; the save costs the first boot 1.7 CPU-seconds under
# TCG (more in wall time on a busy host), paid only where a wedge is
# expected.  Without a saved state (none taken, the save or the restore
# failed), a boot boots afresh; its document's first line says which way
# it began.
#
# A deadlock is a verdict, not the end of the run.  When a case wedges the
# kernel for good, the runner says so ("# kernel wedged by CASE", the cases
# left over not run, without a result) and the guest cannot even
# power off: once everything it printed has arrived, QEMU is killed and a new VM
# runs the cases left over (the same suite arguments plus "--case NAME" for
# each, and "--facts LIST" once a boot printed the facts its policy probe
# measured: the same kernel, not probed again).  At most one boot more than
# there are cases, and none after a boot in which no case got a verdict.
# The KTAP reader (tools/ktap/ktap) reads every boot's document, and its
# merge makes one document of them: the first boot's plan and order, every
# case once.
#
# A run is green only when its document is whole: as many results as its
# plan (every repetition of --repeat counted), each boot ended by its end
# marker or by a wedge the suite reported.  A guest that dies otherwise (a
# panic, an oops that kills init, QEMU killed or stopped by the host, no
# end marker within --timeout, a new VM that never starts the suite) or a
# suite that ends before its document is whole ends the run as an
# infrastructure failure, with the console's last kernel lines in the
# document and on stderr; the case that was running, where it can be named
# (the first of the planned order without a result: the runner's --list,
# which the caller gives with --cases), gets "not ok N CASE # ERROR why".
#
# The kernel booted is the kernel meant: the runner names the kernel it
# runs on after its plan ("# kernel: RELEASE build-id ID", lib/identity.h),
# and each boot's ID must be the one of the kernel entry (its build-id file,
# written by its maker) or of the image booted (qemu.sh's boot_build_id).  A
# document without that line, or with another ID, is an infrastructure
# failure naming both, and its verdicts are not taken (the boot's own
# boot-K.ktap stays for a look).  Only an image without a build ID goes
# unchecked, and a boot in which nothing but skips ran.
#
# Exit status, from that document: 0 nothing failed, 1 a case failed, 4 all
# skipped (with one boot: the guest suite's own exit status, or, when the
# document is a kselftest runner's, which exits 0 whatever happened, the
# one its result line for module_async.sh says: see suite_rc); 2 bad usage;
# 3 infrastructure failure (QEMU failed, the first guest never started the
# suite, a guest that died or a document cut short as above, another kernel
# than the one meant; a first boot whose kernel crashed before the suite
# began is booted once more first).  On a failure, what the suite printed
# so far is still written to results.ktap and stdout, but for another
# kernel's.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/vm/qemu.sh
. "$TOOLS/vm/qemu.sh"
readonly KTAP=$TOOLS/ktap/ktap
readonly RUNNER_TEST='selftests: module_async: module_async.sh'	# run_kselftest's

readonly STATE_FILE=guest.state	# the guest's state before the first case
readonly CONSOLE_LINES=20	# kernel lines quoted for a guest that died

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
                  runner's --list): needed to name a dead guest's case
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

kernel='' initrd='' out='' timeout=300 accel=auto boot_mode=auto memory=1G smp=2
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
	--boot) need_arg "$1" $#; boot_mode=$2; shift 2 ;;
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
case $boot_mode in
auto|pvh|bzimage) ;;
*) usage_error "bad --boot '$boot_mode' (auto, pvh or bzimage)" ;;
esac
for arg in ${suite_args[@]+"${suite_args[@]}"}; do
	[[ $arg != *$'\n'* ]] || usage_error "a suite argument cannot hold a newline: '$arg'"
done

need_cmd qemu-system-x86_64
[ -f "$initrd" ] || die "no initramfs at $initrd"
[ -z "$cases_file" ] || [ -r "$cases_file" ] || die "cannot read --cases $cases_file"
image=$(boot_image "$kernel" "$boot_mode")
accel=$(qemu_accel "$accel")
want_id=$(boot_build_id "$kernel" "$image") || want_id=''
if [ -n "$want_id" ]; then
	log "the kernel meant to boot: build ID $want_id"
else
	log "$kernel has no build ID: which kernel boots is not checked"
fi

mkdir -p "$out"
readonly console=$out/console.log serial1=$out/serial1.log results=$out/results.ktap
readonly state=$out/$STATE_FILE
rm -f "$out"/boot-[0-9]*.ktap "$out"/boot-[0-9]*.record "$results" "$state"
: >"$console"
: >"$serial1"
trap 'rm -f "$state"' EXIT
# On SIGTERM or SIGHUP (sent to the whole group, as a harness does) bash
# runs a trap only once the boot it waits for has ended: vm-boot.sh stops
# QEMU first, so nothing of the run outlives it. SIGINT does so by itself.
trap 'exit 143' TERM
trap 'exit 129' HUP

# record RECORD KEY: a value of vm-boot.sh's record of a boot.
record()
{
	awk -v k="$2" '$1 == k { sub(/^[^ ]* ?/, ""); print; exit }' "$1"
}

# planned_cases WANTED...: the cases of --cases in run order (their first
# words), restricted to WANTED if any are named.
planned_cases()
{
	local name

	[ -n "$cases_file" ] || return 0
	while read -r name _; do
		[ -n "$name" ] || continue
		[ $# -eq 0 ] || in_list "$name" "$@" || continue
		printf '%s\n' "$name"
	done <"$cases_file"
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

# console_crash OFFSET: the console's last kernel crash line (a panic, an
# oops, a BUG) from OFFSET (where a boot began); fails without one.
console_crash()
{
	local crash='Kernel panic - not syncing: |BUG: |Oops: |general protection fault'

	tail -c +$(($1 + 1)) "$console" | tr -d '\r' | grep -aoE "($crash).*" | tail -n 1 |
		grep .
}

# died_why RECORD BOOT: why boot BOOT ended before its document was whole.
died_why()
{
	local panic

	case $(record "$1" outcome) in
	timeout) printf 'no end marker within %s s (boot %s)\n' "$timeout" "$2" ;;
	silent) printf 'the new VM (boot %s) did not start the suite\n' "$2" ;;
	end)
		printf 'the suite exited (rc=%s) before its document was whole (boot %s)\n' \
			"$(record "$1" rc)" "$2"
		;;
	*)
		panic=$(console_crash "$(record "$1" console_off)") || true
		printf 'guest died: %s\n' "${panic:-QEMU exited without the end marker}"
		;;
	esac
}

# doc_results DOC: how many results DOC has.
doc_results()
{
	"$KTAP" results "$1" | wc -l
}

# doc_whole DOC: DOC has a plan and as many results as it plans.
doc_whole()
{
	local plan

	plan=$("$KTAP" plan "$1") || return 1
	[ "$(doc_results "$1")" = "$plan" ]
}

# wrong_kernel BOOT: what is wrong with the kernel boot BOOT ran, as its
# document's identity line names it, against the build ID meant ($want_id);
# fails where nothing is, or nothing can be compared: no build ID meant, or
# a document where nothing but skips ran.
wrong_kernel()
{
	local doc=$out/boot-$1.ktap got id=''

	[ -n "$want_id" ] || return 1
	"$KTAP" verdicts "$doc" | awk '$NF != "skip" { ran = 1 } END { exit !ran }' || return 1
	got=$("$KTAP" kernel "$doc") || got=''
	[[ ! $got =~ build-id\ ([0-9a-f]+)$ ]] || id=${BASH_REMATCH[1]}
	if [ -z "$got" ]; then
		echo "boot $1 does not say which kernel it ran" \
			"(no \"# kernel: RELEASE build-id\" line)," \
			"where build ID $want_id was meant"
	elif [ -z "$id" ]; then
		echo "boot $1's kernel does not tell its build ID ($got)," \
			"where build ID $want_id was meant"
	elif [ "$id" != "$want_id" ]; then
		echo "boot $1 ran the kernel with build ID $id ($got), not the one meant:" \
			"build ID $want_id"
	else
		return 1
	fi
}

# console_excerpt OFFSET: CONSOLE_LINES kernel lines of the console from
# OFFSET (where a boot began): from just before the first oops or panic if
# there is one, else the last ones (none, when a restored guest's kernel
# said nothing).
console_excerpt()
{
	tail -c +$(($1 + 1)) "$console" | tr -d '\r' |
		sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' |
		{ grep -aE '^[[:space:]]*\[[[:space:]]*[0-9]+\.[0-9]+\]' || true; } |
		awk -v max="$CONSOLE_LINES" '
		{ line[NR] = $0 }
		!first && (/Kernel panic - not syncing|BUG: |Oops: / ||
			   /general protection fault/) { first = NR }
		END {
			from = first ? (first > 2 ? first - 2 : 1) : (NR > max ? NR - max + 1 : 1)
			for (i = from; i <= NR && i < from + max; i++) print line[i]
		}'
}

# complete_doc BOOT CASE WHY NPLAN NAMED: boot BOOT ended, for WHY, before its
# document was whole, after NAMED named results: the document gets the
# console's last kernel lines, "not ok N CASE # ERROR WHY" if CASE (the one
# that was running) is named, and plan 1..NPLAN if the suite never printed
# one.
complete_doc()
{
	local boot=$1 case=$2 why=$3 doc=$out/boot-$1.ktap

	if ! "$KTAP" plan "$doc" >/dev/null; then
		{
			echo "TAP version 13"
			echo "1..$4"
			"$KTAP" body "$doc"
		} >"$doc.new"
		mv "$doc.new" "$doc"
	fi
	{
		echo "# ${case:-boot $boot}: $why; the kernel's console (boot $boot):"
		console_excerpt "$(record "$out/boot-$boot.record" console_off)" |
			sed 's/^/# console: /'
		if [ -n "$case" ]; then
			echo "not ok $(($5 + 1)) $case # ERROR $why"
			echo "# $case: ERROR $why"
		fi
	} >>"$doc"
	[ -z "$case" ] || log "boot $boot: not ok $case # ERROR $why"
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

# suite_rc DOC RC: the suite's exit status: the guest's RC, but for a
# kselftest runner's document, whose result line for the suite says it: ok
# 0, skip 4, "not ok ... # exit=N" N, another not ok 1.
suite_rc()
{
	local directive

	case $("$KTAP" verdict "$RUNNER_TEST" "$1") in
	'') echo "$2" ;;
	ok) echo 0 ;;
	skip) echo 4 ;;
	*)
		directive=$("$KTAP" directive "$RUNNER_TEST" "$1")
		[[ $directive =~ ^exit=([0-9]+) ]] && echo "${BASH_REMATCH[1]}" || echo 1
		;;
	esac
}

# finish BOOTS INFRA: one document of the boots' documents, printed and in
# results.ktap; the exit status from it (or 3, saying INFRA).  Not for
# another kernel than the one meant ($wrong): its verdicts are not taken.
finish()
{
	local boots=$1 infra=$2 rec=$out/boot-$1.record docs=() k status=0 rc

	if [ -n "$wrong" ]; then
		rm -f "$out"/boot-[0-9]*.record
		die "$infra (its document, not taken as results: $out/boot-$boots.ktap)"
	fi
	rc=$(record "$rec" rc)
	if [ "$boots" = 1 ] && [ "$(record "$rec" outcome)" = end ] &&
	   [ "$(record "$rec" wedged)" = 0 ] && [ -z "$infra" ]; then
		# One clean boot: its document and its exit status, as they are.
		mv "$out/boot-1.ktap" "$results"
		rm -f "$rec"
		cat "$results"
		rc=$(suite_rc "$results" "$rc")
		log "guest finished: rc=$rc; $results, $console"
		case $rc in
		0|1|4) exit "$rc" ;;
		126|127) die "the suite could not run in the guest (rc=$rc)" ;;
		*) log "the suite exited with $rc: reporting a failure"; exit 1 ;;
		esac
	fi
	if [ "$boots" = 1 ] && [ -n "$infra" ]; then
		[ "$(record "$rec" began)" = 1 ] || show_what_arrived
		mv "$out/boot-1.ktap" "$results"
		rm -f "$rec"
		cat "$results"
		die "$infra"
	fi
	for ((k = 1; k <= boots; k++)); do
		docs+=("$out/boot-$k.ktap")
	done
	"$KTAP" merge "${docs[@]}" >"$results" || status=$?
	[ "$boots" -gt 1 ] || rm -f "${docs[@]}"
	rm -f "$out"/boot-[0-9]*.record
	cat "$results"
	log "$boots boot(s); $results, $console"
	[ -z "$infra" ] || die "$infra"
	doc_whole "$results" || die "the run's document is not whole:" \
		"$(doc_results "$results") results of $("$KTAP" plan "$results" || echo no) planned"
	case $status in
	0|1|4) exit "$status" ;;
	*) die "could not merge the boots' documents (ktap merge exit $status)" ;;
	esac
}

# ---- the run --------------------------------------------------------------

# base_args: the suite arguments without any --case (resumed boots name
# their cases themselves); wanted: the cases those --case options named.
base_args=() wanted=()
set -- ${suite_args[@]+"${suite_args[@]}"}
while [ $# -gt 0 ]; do
	case $1 in
	--case|-c) [ $# -ge 2 ] && wanted+=("$2"); shift 2 || shift ;;
	--case=*) wanted+=("${1#--case=}"); shift ;;
	*) base_args+=("$1"); shift ;;
	esac
done
mapfile -t planned < <(planned_cases ${wanted[@]+"${wanted[@]}"})

declare -A final=()	# the cases with a verdict, from any boot
boot_args=(${suite_args[@]+"${suite_args[@]}"})
nplan=${#wanted[@]}	# what the boot runs, if it prints no plan
[ "$nplan" -gt 0 ] || nplan=${#planned[@]}
note='' max_boots=0 infra='' boot=0 first_opt=() retried='' facts='' wrong=''
for arg in ${base_args[@]+"${base_args[@]}"}; do
	[[ ${#arg} -lt 3 || --allow-deadlock != "$arg"* ]] || first_opt=(--save "$state")
done
state_opt=(${first_opt[@]+"${first_opt[@]}"})
while :; do
	boot=$((boot + 1))
	rec=$out/boot-$boot.record
	doc=$out/boot-$boot.ktap
	"$TOOLS/vm/vm-boot.sh" --image "$image" --initrd "$initrd" --out "$out" \
		--boot "$boot" --accel "$accel" --timeout "$timeout" --memory "$memory" \
		--smp "$smp" --note "$note" "${state_opt[@]}" \
		-- ${boot_args[@]+"${boot_args[@]}"} ||
		die "boot $boot failed to run (see $out/qemu.log)"
	state_opt=(--restore "$state")
	accel=$(record "$rec" accel)
	outcome=$(record "$rec" outcome)
	wedged=$(record "$rec" wedged)
	doc_plan=$("$KTAP" plan "$doc") || doc_plan=''
	mapfile -t doc_names < <("$KTAP" verdicts "$doc" | awk '$2 != "(unnamed)" { print $2 }')
	mapfile -t doc_not_run < <("$KTAP" leftover "$doc")
	# What a load waits for, as a boot measured it: later boots are
	# given it (the same kernel) instead of measuring it again.
	if [ -z "$facts" ]; then
		facts=$("$KTAP" facts "$doc" | head -n 1) || facts=''
		[[ $facts != *unknown* ]] || facts=''
	fi

	if [ "$boot" = 1 ] && [ "$(record "$rec" began)" = 0 ]; then
		# A kernel that crashed before the suite began (seen under TCG:
		# an oops in text patching early in boot) is booted once more.
		crash=$(console_crash "$(record "$rec" console_off)") || true
		if [ -z "$retried" ] && [ -n "$crash" ]; then
			log "boot 1: the kernel crashed before the suite began ($crash):" \
				"booting it once more"
			retried=1 boot=0 state_opt=(${first_opt[@]+"${first_opt[@]}"})
			continue
		fi
		if [ ! -s "$console" ]; then
			infra="QEMU failed (see $out/qemu.log): $(tail -n 1 "$out/qemu.log")"
		else
			infra="the guest did not start the suite"
			infra+=" ($outcome after $(record "$rec" seconds) s${crash:+: $crash})"
		fi
		break
	fi
	if [ "$boot" = 1 ]; then
		if [ -n "$doc_plan" ]; then
			max_boots=$((doc_plan + 1))
		elif [ ${#planned[@]} -gt 0 ]; then
			max_boots=$((${#planned[@]} + 1))
		fi
		rc=$(record "$rec" rc)
		if [ -z "$doc_plan" ] && [ "$outcome" = end ] && [ "$wedged" = 0 ]; then
			case $rc in
			126|127) infra="the suite could not run in the guest (rc=$rc)" ;;
			esac
			[ -z "$infra" ] || break
		fi
	fi
	if infra=$(wrong_kernel "$boot"); then
		wrong=1
		break
	fi

	progress=0
	for name in ${doc_names[@]+"${doc_names[@]}"}; do
		[ -n "${final[$name]:-}" ] || progress=1
		final[$name]=1
	done

	# A clean end, the document whole: done.
	if [ "$outcome" = end ] && [ "$wedged" = 0 ] && doc_whole "$doc"; then
		break
	fi

	if [ "$wedged" = 0 ]; then
		# The guest died, or the suite ended short: the run ends here,
		# whatever the case list says; the case that was running is
		# blamed where it can be named.
		running=''
		for name in ${planned[@]+"${planned[@]}"}; do
			if [ -z "${final[$name]:-}" ] &&
			   ! in_list "$name" ${doc_names[@]+"${doc_names[@]}"}; then
				running=$name
				break
			fi
		done
		why=$(died_why "$rec" "$boot")
		infra="boot $boot: $why, after $(doc_results "$doc") results"
		infra+=" of ${doc_plan:-$nplan} planned${running:+ (in $running)}"
		complete_doc "$boot" "$running" "$why" "$nplan" "${#doc_names[@]}"
		{
			echo "---- the kernel's last lines (boot $boot) ----"
			console_excerpt "$(record "$rec" console_off)"
			echo "----"
		} >&2
		break
	fi

	# The cases left over: the planned ones without a verdict, else those
	# the wedge left not run.
	remaining=()
	if [ ${#planned[@]} -gt 0 ]; then
		for name in "${planned[@]}"; do
			[ -n "${final[$name]:-}" ] || remaining+=("$name")
		done
	else
		remaining=(${doc_not_run[@]+"${doc_not_run[@]}"})
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
	nplan=${#remaining[@]}
	boot_args=(${base_args[@]+"${base_args[@]}"})
	[ -z "$facts" ] || boot_args+=(--facts "$facts")
	for name in "${remaining[@]}"; do
		boot_args+=(--case "$name")
	done
	note=" (a new VM for the cases left over: ${remaining[*]})"
	printf '==== vm-run.sh: boot %d, a new VM: %s ====\n' "$((boot + 1))" "${boot_args[*]}" |
		tee -a "$console" >>"$serial1"
done
finish "$boot" "$infra"
