#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the initramfs of the module_async test VM: busybox, dash as /bin/sh
# and util-linux dmesg with their shared libraries, the kmod tools (Debian's
# kmod of the host's version built static, tools/vm/build-kmod.sh), the
# kernel's own modules the cases load (the runner's --list-modules) with
# their dependencies, the suite in /opt/module_async/ (--suite) or a kselftest
# install in /opt/kselftest/ (--kselftest), its test modules in
# /lib/modules/<krel>/extra/ (the suite's modules/ a link there), and
# tools/vm/guest-init.sh as /init.  An
# image made from the same inputs as the one at --out (FILE.inputs beside
# it says which) is left as it is.
#
# /etc/module_async.via tells /init which way to run the suite: "direct"
# (/opt/module_async/module_async.sh) or "run_kselftest"
# (/opt/kselftest/run_kselftest.sh -c module_async).  For the latter the
# initramfs also has coreutils' timeout as /usr/bin/timeout: the kselftest
# runner bounds the suite with "/usr/bin/timeout --foreground", which
# busybox's timeout lacks.
#
# The kernel ENTRY is a directory laid out like a tools/kernel/fetch-kernel.sh entry
# (any kernel build can provide one):
#   vmlinuz                 the kernel image (not used here)
#   krel                    the kernel release
#   lib/modules/<krel>/     its modules with modules.dep, as installed by
#                           depmod or make modules_install; modules built in
#                           are listed in modules.builtin
#   kdir                    the build or headers tree (not used here)

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

KMOD_TOOLS=(modprobe insmod rmmod lsmod depmod modinfo)

usage()
{
	cat <<EOF
Usage: $PROG --kernel ENTRY (--suite DIR | --kselftest DIR) --out FILE

Build a gzip'd newc cpio initramfs for the module_async test VM.

  --kernel ENTRY  kernel entry directory (vmlinuz, krel, lib/modules/<krel>/),
                  e.g. the path tools/kernel/fetch-kernel.sh prints
  --suite DIR     installed suite: module_async.sh, module_async, config,
                  settings, modules/*.ko (everything in DIR is copied to
                  /opt/module_async/)
  --kselftest DIR a kselftest install (make install INSTALL_PATH=DIR):
                  run_kselftest.sh, kselftest/, kselftest-list.txt,
                  module_async/ (everything in DIR is copied to
                  /opt/kselftest/); the guest runs
                  run_kselftest.sh -c module_async
  --out FILE      the initramfs to write
  --help          show this help
EOF
}

entry='' suite='' ksft='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) need_arg "$1" $#; entry=$2; shift 2 ;;
	--suite) need_arg "$1" $#; suite=$2; shift 2 ;;
	--kselftest) need_arg "$1" $#; ksft=$2; shift 2 ;;
	--out) need_arg "$1" $#; out=$2; shift 2 ;;
	--kernel=*) entry=${1#*=}; shift ;;
	--suite=*) suite=${1#*=}; shift ;;
	--kselftest=*) ksft=${1#*=}; shift ;;
	--out=*) out=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
[ -n "$entry" ] || usage_error "--kernel is required"
[ -n "$suite" ] || [ -n "$ksft" ] || usage_error "--suite or --kselftest is required"
[ -z "$suite" ] || [ -z "$ksft" ] || usage_error "--suite and --kselftest exclude each other"
[ -n "$out" ] || usage_error "--out is required"

need_cmd busybox dash kmod dmesg ldd depmod cpio gzip find sort strip realpath

[ -f "$entry/krel" ] || die "$entry is not a kernel entry: no krel file"
krel=$(cat "$entry/krel")
moddir=$entry/lib/modules/$krel
[ -d "$moddir" ] || die "$entry has no lib/modules/$krel/"
if [ -n "$suite" ]; then
	via=direct
	optdir=/opt/module_async
	[ -f "$suite/module_async.sh" ] || die "$suite has no module_async.sh"
else
	via=run_kselftest
	optdir=/opt/kselftest
	suite=$ksft
	for f in run_kselftest.sh kselftest/runner.sh kselftest-list.txt \
		 module_async/module_async.sh; do
		[ -f "$suite/$f" ] || die "$suite is not a kselftest install of module_async: no $f"
	done
	need_cmd timeout
fi
# The kernel's own modules the cases load (as modprobe names them), from
# the runner's case table; each comes with what modules.dep says it needs.
runner=$suite/module_async
[ "$via" = direct ] || runner=$suite/module_async/module_async
list=$("$runner" --list-modules) || die "$runner --list-modules failed"
[ -n "$list" ] || die "$runner --list-modules names no module"
mapfile -t kernel_modules <<<"$list"
busybox=$(command -v busybox)
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked: install busybox-static"
fi

stale_remove "${TMPDIR:-/tmp}/mkinitramfs."

# Made from: the kernel entry (a cache entry's stamp names what it holds;
# an entry without one is never taken as unchanged), the suite, what packs
# it and the host's tools.  The same as last time: the image stays.
stamp=$out.inputs
key=''
if [ -f "$entry/.complete" ]; then
	key=$(printf 'kernel %s %s uid %s epoch %s\n' "$(cd "$entry" && pwd)" "$krel" \
		"$(id -u)" "${SOURCE_DATE_EPOCH:-0}"
	      cat "$entry/.complete"
	      printf 'module %s\n' "${kernel_modules[@]}"
	      files_key "$suite" "$TOOLS/vm/mkinitramfs.sh" "$TOOLS/lib.sh" \
		"$TOOLS/vm/guest-init.sh" "$TOOLS/vm/build-kmod.sh"
	      tools_key busybox dash kmod dmesg depmod cpio gzip strip
	      [ "$via" = direct ] || tools_key timeout)
	if step_current "$stamp" "$key" "$out"; then
		log "$out is up to date (made from the same inputs: $stamp)"
		exit 0
	fi
fi
rm -f "$stamp"
root=$(mktemp -d "${TMPDIR:-/tmp}/mkinitramfs.$$.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,dev,proc,sys,run,tmp,etc}
mkdir -p "$root$optdir" "$root/lib/modules/$krel"

# copy_with_libs FILE DEST: an executable and every shared library it needs,
# at their own paths, the dynamic loader included.
copy_with_libs()
{
	local file=$1 dest=$2 lib

	cp -L "$file" "$root$dest"
	ldd "$file" >/dev/null 2>&1 || return 0
	for lib in $(ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
				      $1 ~ /^\// { print $1 }'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	if ldd "$file" | grep -q 'not found'; then
		die "$file needs libraries that are not installed:" \
			"$(ldd "$file" | grep 'not found' | tr -s ' \t\n' ' ')"
	fi
}

# busybox and its applets; the real kmod tools and dmesg replace its own.
cp "$busybox" "$root/bin/busybox"
while read -r applet; do
	case ${applet##*/} in
	busybox|kmod|dmesg|sh) continue ;;
	esac
	for tool in "${KMOD_TOOLS[@]}"; do
		[ "${applet##*/}" != "$tool" ] || continue 2
	done
	mkdir -p "$root/$(dirname "$applet")"
	ln -sf /bin/busybox "$root/$applet"
done < <(busybox --list-full)
# Debian's busybox-static prefers its own applets to the programs on PATH,
# in its shell and in the applets that run commands (timeout, env, xargs):
# its sh would run busybox modprobe, not kmod's.  /bin/sh is dash, which
# runs what PATH finds.
copy_with_libs "$(command -v dash)" /bin/dash
ln -sfn dash "$root/bin/sh"
kmod=$("$TOOLS/vm/build-kmod.sh") || die "no kmod for the guest"
cp "$kmod" "$root/bin/kmod"
for tool in "${KMOD_TOOLS[@]}"; do
	ln -s /bin/kmod "$root/sbin/$tool"
done
copy_with_libs "$(command -v dmesg)" /bin/dmesg
cp "$TOOLS/vm/guest-init.sh" "$root/init"
chmod 755 "$root/init"

# The kernel's modules the suite needs, with their dependencies.
cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$krel/" 2>/dev/null ||
	true
for mod in "${kernel_modules[@]}"; do
	name=${mod//-/_}
	files=$(module_files "$moddir" "$mod")
	if [ -z "$files" ]; then
		if [ -f "$moddir/modules.builtin" ] &&
		   sed 's,.*/,,; s,\.ko$,,; s,-,_,g' "$moddir/modules.builtin" |
			grep -qx "$name"; then
			log "$mod is built into $krel"
			continue
		fi
		[ -f "$moddir/modules.dep" ] || die "no $moddir/modules.dep (run depmod -b)"
		die "kernel $krel has no module $mod (neither in modules.dep nor built in)"
	fi
	for f in $files; do
		mkdir -p "$root/lib/modules/$krel/$(dirname "$f")"
		cp "$moddir/$f" "$root/lib/modules/$krel/$f"
	done
done

# The suite, and its test modules where modprobe and request_module() find them.
cp -a "$suite/." "$root$optdir/"
while IFS= read -r -d '' file; do
	if [ -x "$file" ] && ldd "$file" >/dev/null 2>&1; then
		copy_with_libs "$file" "$optdir/${file#"$suite"/}"
	fi
done < <(find "$suite" -type f -print0)
echo "$via" >"$root/etc/module_async.via"
if [ "$via" = run_kselftest ]; then
	rm -f "$root/usr/bin/timeout"
	copy_with_libs "$(command -v timeout)" /usr/bin/timeout
fi
shopt -s nullglob
kodir=$suite/modules
[ "$via" = direct ] || kodir=$suite/module_async/modules
kos=("$kodir"/*.ko)
if [ ${#kos[@]} -eq 0 ]; then
	log "warning: no test modules in $kodir/"
else
	# Once, without their debug information (kallsyms keeps their
	# symbols): 35 kB, not 1.4 MB twice, for the guest to unpack; the
	# suite's modules/ is a link to them.
	extra=$root/lib/modules/$krel/extra
	mkdir -p "$extra"
	for ko in "${kos[@]}"; do
		strip --strip-debug -o "$extra/${ko##*/}" "$ko"
	done
	mods=$root$optdir/${kodir#"$suite"/}
	rm -r "$mods"
	ln -s "$(realpath -m --relative-to="${mods%/*}" "$extra")" "$mods"
fi
depmod -b "$root" "$krel"

# The FIFOs /init uses, its lines marked "# FIFO:".
sed -n 's|^[A-Z_]*=\(/run/[^[:space:]]*\)[[:space:]]*# FIFO:.*|\1|p' "$TOOLS/vm/guest-init.sh" |
	while IFS= read -r fifo; do mkfifo -m 600 "$root$fifo"; done

# The kernel opens /dev/console before /init mounts devtmpfs.
if [ "$(id -u)" -eq 0 ]; then
	mknod -m 600 "$root/dev/console" c 5 1
fi

mkdir -p "$(dirname "$out")"
stale_remove "$out.tmp."
out_tmp=$(mktemp "$out.tmp.$$.XXXXXX")
trap 'rm -rf "$root" "$out_tmp"' EXIT
find "$root" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0 --reproducible) | gzip -n -6 >"$out_tmp"
mv "$out_tmp" "$out"
[ -z "$key" ] || step_done "$stamp" "$key" "$out"
log "wrote $out ($(du -h "$out" | cut -f1), kernel $krel)"
