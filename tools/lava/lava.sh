#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lava.sh - the suite as a LAVA job, run for real on this machine (make lava).
#
# vm.sh --prepare makes the kernel, the runner, the test modules and the
# initramfs, as for make vm; the suite's arguments are appended to the
# initramfs (qemu.sh's initrd_with_args, as vm-run does for a boot
# that saves no state): LAVA's QEMU has no host to send them.
# The job is tools/lava/qemu-job.jinja2, its timeouts derived from
# settings' timeout; the device is tools/lava/device-qemu.jinja2, rendered
# on the device-type templates of Debian's lava-server package at the
# version of the lava-dispatcher installed (the .deb is unpacked into the
# cache, $CACHE/lava-server/<version>/; the server is never installed).
# Debian's lava-dispatcher runs the job without a server (lava-run, as
# root).  What LAVA recorded, read from lava-run's log, goes to stdout, one
# "CASE RESULT" line a test case (pass, fail or skip), and to
# build/lava/<kernel>/results, with the job, the device, lava-run's log
# (lava.log) and its output directory beside it.
#
# Exit status: 0 no case failed, 1 a case failed, 4 every case skipped (as
# make vm); 2 bad usage; 3 the image or the job could not be made, or LAVA
# did not complete the job or recorded no case.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/vm/qemu.sh
. "$TOOLS/vm/qemu.sh"
readonly LAVA_PY=$TOOLS/lava/lava.py
readonly DEFINITION=module_async	# the monitor's name in qemu-job.jinja2

# The lab's bound on a boot up to /init, and on each step around it: under
# TCG, on this 2-core host, Debian's 6.1 reaches /init in about 15 s.
readonly BOOT_TIMEOUT=120
# lava-run past the job's own timeout: LAVA's cleanup after a timeout.
readonly CLEANUP_S=60

usage()
{
	cat <<EOF
usage: $PROG [kernel options] [--allow-deadlock] [--out DIR] [-- suite arguments]

Runs the suite as a LAVA job (lava-run, QEMU under TCG) and prints the
result LAVA recorded for each case: "CASE pass|fail|skip".

  kernel options    vm.sh's: --kernel, --dist, --src, --kver, --kdir,
                    --moddir, --patch (see tools/vm/vm.sh --help)
  --allow-deadlock  run the cases that can wedge the kernel for good
  --out DIR         where the job and its results go
                    (default: build/lava/<kernel>)
  --image FILE      boot the image FILE names (what vm.sh --prepare
                    printed, as lava.sh keeps it in DIR/image) instead of
                    making one; no kernel options then
  -h, --help        this text
EOF
}

vm_args=()
suite_args=()
out=
image_file=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | --dist | --src | --kver | --kdir | --moddir | --patch)
		need_arg "$1" $#
		vm_args+=("$1" "$2")
		shift
		;;
	--allow-deadlock) suite_args+=("$1") ;;
	--out) need_arg "$1" $#; out=$2; shift ;;
	--image) need_arg "$1" $#; image_file=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; suite_args+=("$@"); break ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done
if [ -n "$image_file" ]; then
	[ ${#vm_args[@]} -eq 0 ] || usage_error "--image goes without kernel options"
	[ -r "$image_file" ] || usage_error "cannot read --image $image_file"
fi
# The suite's --help and lists need no job: vm.sh answers them.
for arg in ${suite_args[@]+"${suite_args[@]}"}; do
	case $arg in
	-h | --help | -l | --list | --list-modules)
		exec "$TOOLS/vm/vm.sh" ${vm_args[@]+"${vm_args[@]}"} -- "${suite_args[@]}"
		;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "lava-run runs jobs as root only"

# lava_templates: the device-type templates of lava-server at the version
# of the lava-dispatcher installed, unpacked once into the cache.
lava_templates()
{
	local ver entry sha arch deb

	ver=$(dpkg-query -W -f='${Version}' lava-dispatcher)
	entry=$(cache_dir)/lava-server/$ver
	entry_lock "$entry"
	if ! entry_valid "$entry" "lava-server $ver"; then
		entry_remove "$entry"
		entry_tmp "$entry"
		read -r _ sha arch < <(deb_index "$ver" lava-server) ||
			die "apt knows no lava-server=$ver (run apt-get update)"
		deb=$(deb_fetch lava-server "$ver" "$sha" "$arch" "$(cache_dir)/debs")
		dpkg-deb -x "$deb" "$ENTRY_TMP/root" || die "could not unpack $deb"
		mv "$ENTRY_TMP/root/usr/share/lava-server/device-types" "$ENTRY_TMP/"
		rm -rf "$ENTRY_TMP/root"
		entry_commit "$entry" "lava-server $ver"
	fi
	exec 9>&-
	[ -f "$entry/device-types/qemu.jinja2" ] || die "no qemu.jinja2 in lava-server $ver"
	printf '%s\n' "$entry/device-types"
}

# The image, as make vm would boot it: a usage error is vm.sh's.
rc=0
if [ -n "$image_file" ]; then
	prepared=$(cat "$image_file")
else
	prepared=$("$TOOLS/vm/vm.sh" --prepare ${vm_args[@]+"${vm_args[@]}"} \
		-- ${suite_args[@]+"${suite_args[@]}"}) || rc=$?
fi
case $rc in
0) ;;
2) exit 2 ;;
*) die "could not make the image (vm.sh --prepare: exit $rc)" ;;
esac
# After the image: vm.sh has checked the options and installed the rest.
"$TOOLS/deps.sh" --lava || die "missing packages"
need_cmd lava-run dpkg-deb

prepared_value()
{
	awk -v k="$1" '$1 == k { sub(/^[^ ]* /, ""); print }' <<<"$prepared"
}
name=$(prepared_value name)
entry=$(prepared_value entry)
if [ -z "$name" ] || [ ! -d "$entry" ] || [ ! -f "$(prepared_value initrd)" ]; then
	die "no image: name, entry and initrd wanted, got: $prepared"
fi

out=${out:-$TOP/build/lava/$name}
mkdir -p "$out"
exec 7>"$out/.lock"
flock -n 7 || die "another run is using $out: wait for it to end, or give --out"
rm -rf "$out/output"
rm -f "$out/results" "$out/lava.log"
[ "$image_file" -ef "$out/image" ] || printf '%s\n' "$prepared" >"$out/image"

image=$(boot_image "$entry" auto)
initrd_with_args "$(prepared_value initrd)" "$out/initramfs.cpio.gz" \
	${suite_args[@]+"${suite_args[@]}"}
suite_timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$TOP/settings")
[ -n "$suite_timeout" ] || die "no timeout in $TOP/settings"

"$LAVA_PY" job "$TOOLS/lava/qemu-job.jinja2" \
	job_name="module_async on $name${suite_args[*]:+ (${suite_args[*]})}" \
	kernel_url="file://$image" kernel_args="$QEMU_CMDLINE" \
	initrd_url="file://$out/initramfs.cpio.gz" \
	suite_timeout="$suite_timeout" boot_timeout="$BOOT_TIMEOUT" >"$out/job.yaml" ||
	die "could not render the job"
types=$(lava_templates)
"$LAVA_PY" device "$TOOLS/lava/device-qemu.jinja2" "$types" "$out/job.yaml" \
	>"$out/device.yaml" || die "could not render the device"
job_timeout=$("$LAVA_PY" timeout "$out/job.yaml")

# lava-run's working directory is /var/lib/lava/dispatcher/tmp/<job id>;
# it removes it at the end of a job, and this script after one it killed.
job_id=$$
trap 'rm -rf "/var/lib/lava/dispatcher/tmp/$job_id"' EXIT
log "lava-run: job $job_id on $name (timeout ${job_timeout}s; log $out/lava.log)"
lava_rc=0
start=$(date +%s)
timeout -k 10 $((job_timeout + CLEANUP_S)) lava-run --job-id "$job_id" \
	--output-dir "$out/output" --device "$out/device.yaml" "$out/job.yaml" \
	2>"$out/lava.log" || lava_rc=$?
log "lava-run ended after $(($(date +%s) - start)) s (exit $lava_rc)"

"$LAVA_PY" results "$out/lava.log" "$DEFINITION" >"$out/results" ||
	die "lava-run (exit $lava_rc) logged no job result: see $out/lava.log"
job=$(awk '$1 == "job" { print $2 }' "$out/results")
sed -i '/^job /d' "$out/results"
cat "$out/results"
[ "$job" = pass ] || die "LAVA did not complete the job (lava-run exit $lava_rc): $out/lava.log"
[ -s "$out/results" ] || die "LAVA recorded no case: $out/lava.log"
log "LAVA recorded $(wc -l <"$out/results") cases: $out/results"
# A case of the runner's list without a record (a result line the pattern
# missed, one a kernel message broke) is no pass; with --case the suite
# runs those cases only.
missing=
case " ${suite_args[*]-} " in
*" -c "* | *" --case"*) ;;
*)
	missing=$(awk 'NR == FNR { got[$1]; next } !($1 in got) { print $1 }' \
		"$out/results" "$(prepared_value cases)" | paste -sd ' ')
	;;
esac
if [ -n "$missing" ]; then
	log "LAVA recorded no result for: $missing"
	exit 1
elif grep -q ' fail$' "$out/results"; then
	exit 1
elif ! grep -qv ' skip$' "$out/results"; then
	exit 4
fi
exit 0
