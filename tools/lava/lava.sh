#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lava.sh - make vm's image (vm.sh --prepare) as a LAVA job run here by
# lava-run as root; prints what LAVA recorded, "CASE pass|fail|skip" a line.
#
# usage: lava.sh [kernel options] [--allow-deadlock] [--out DIR] [--image FILE]
#                [-- suite arguments]
#   kernel options    vm.sh's: --kernel, --dist, --src, --ksrc, --kver,
#                     --kdir, --moddir, --patch
#   --allow-deadlock  run the cases that can wedge the kernel for good
#   --out DIR         the job, its logs and results (default: build/lava/<kernel>)
#   --image FILE      boot the image FILE names (DIR/image of a run)
#
# Exit status as make vm's; 3 also when LAVA did not complete the job.

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/debian.sh
. "$TOOLS/debian.sh"
# shellcheck source=tools/vm/qemu.sh
. "$TOOLS/vm/qemu.sh"
readonly LAVA_PY=$TOOLS/lava/lava.py
readonly DEFINITION=module_async	# the monitors' name in qemu-job.jinja2

readonly BOOT_TIMEOUT=120	# the lab's bound on a boot to /init (6.1: 15 s here, TCG)
readonly CLEANUP_S=60	# lava-run past the job's timeout: LAVA's cleanup

usage()
{
	sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0"
}

vm_args=()
suite_args=()
out=
image_file=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | --dist | --src | --ksrc | --kver | --kdir | --moddir | --patch)
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

# lava_templates: the installed lava-dispatcher's lava-server device-types, cached.
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
[ "$rc" -ne 2 ] || exit 2
[ "$rc" -eq 0 ] || die "could not make the image (vm.sh --prepare: exit $rc)"
# After the image: vm.sh has checked the options.
"$TOOLS/deps.sh" --lava || die "missing packages"

declare -A img
while read -r key value; do
	img[$key]=$value
done <<<"$prepared"
name=${img[name]:-}
if [ -z "$name" ] || [ ! -d "${img[entry]:-}" ] || [ ! -f "${img[initrd]:-}" ]; then
	die "no image: name, entry and initrd wanted, got: $prepared"
fi

out=${out:-$TOP/build/lava/$name}
mkdir -p "$out"
exec 7>"$out/.lock"
flock -n 7 || die "another run is using $out: wait for it to end, or give --out"
rm -rf "$out/output" "$out/results" "$out/lava.log"
[ "$image_file" -ef "$out/image" ] || printf '%s\n' "$prepared" >"$out/image"

image=$(boot_image "${img[entry]}" auto)
initrd_with_args "${img[initrd]}" "$out/initramfs.cpio.gz" \
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

job_id=$$
trap 'rm -rf "/var/lib/lava/dispatcher/tmp/$job_id"' EXIT	# lava-run's, if killed
log "lava-run: job $job_id on $name (timeout ${job_timeout}s; log $out/lava.log)"
lava_rc=0
start=$(date +%s)
timeout -k 10 $((job_timeout + CLEANUP_S)) lava-run --job-id "$job_id" \
	--output-dir "$out/output" --device "$out/device.yaml" "$out/job.yaml" \
	2>"$out/lava.log" || lava_rc=$?
log "lava-run ended after $(($(date +%s) - start)) s (exit $lava_rc)"

# A case of the runner's list without a record fails, unless --case chose others.
cases=${img[cases]}
case " ${suite_args[*]-} " in
*" -c "* | *" --case"*) cases= ;;
esac
rc=0
"$LAVA_PY" results "$out/lava.log" "$DEFINITION" ${cases:+"$cases"} >"$out/results" || rc=$?
cat "$out/results"
[[ $rc == [014] ]] || die "LAVA did not complete the job (lava-run exit $lava_rc): $out/lava.log"
log "LAVA recorded $(wc -l <"$out/results") cases: $out/results"
exit "$rc"
