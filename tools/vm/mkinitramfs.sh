#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh - the test VM's initramfs: busybox, dash as /bin/sh
# (busybox's sh would run its own modprobe, not kmod's), util-linux dmesg,
# build-kmod.sh's kmod, the kernel's modules the runner lists and those they
# need, guest-init.sh as /init, the suite in /opt/module_async/ or a
# kselftest install in /opt/kselftest/ (with coreutils' timeout).  An image
# made from the same inputs (FILE.inputs beside it) is left as it is.
#
# usage: mkinitramfs.sh --kernel ENTRY --suite DIR --out FILE
#   --kernel ENTRY  a kernel entry (krel, lib/modules/<krel>/)
#   --suite DIR     the installed suite (module_async.sh, module_async, config,
#                   settings, modules/*.ko) or a kselftest install of it
#   --out FILE      the gzip'd cpio to write

set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0"
}

kernel='' suite='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | --suite | --out) need_arg "$1" $#; printf -v "${1#--}" %s "$2"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
done
for opt in kernel suite out; do
	[ -n "${!opt}" ] || usage_error "--$opt is required"
done

need_cmd busybox dash kmod dmesg ldd depmod cpio gzip find sort strip realpath

[ -f "$kernel/krel" ] || die "$kernel is not a kernel entry: no krel file"
krel=$(cat "$kernel/krel")
moddir=$kernel/lib/modules/$krel
[ -d "$moddir" ] || die "$kernel has no lib/modules/$krel/"
if [ -f "$suite/run_kselftest.sh" ]; then
	via=run_kselftest optdir=/opt/kselftest sub=module_async/
	need_cmd timeout
else
	via=direct optdir=/opt/module_async sub=
	[ -f "$suite/module_async.sh" ] || die "$suite has no module_async.sh"
fi
runner=$suite/${sub}module_async
mapfile -t kernel_modules < <("$runner" --list-modules)
[ -n "${kernel_modules[0]:-}" ] || die "$runner --list-modules failed or named no module"
busybox=$(command -v busybox)
! ldd "$busybox" >/dev/null 2>&1 || die "$busybox is dynamically linked: install busybox-static"

stale_remove "${TMPDIR:-/tmp}/mkinitramfs."

# The key: the kernel entry (a cache entry, by its stamp), the suite, what
# packs it and the host's tools.
stamp=$out.inputs
key=''
if [ -f "$kernel/.complete" ]; then
	key=$(printf 'kernel %s %s uid %s epoch %s\n' "$(cd "$kernel" && pwd)" "$krel" \
		"$(id -u)" "${SOURCE_DATE_EPOCH:-0}"
	      cat "$kernel/.complete"
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
mods=$root/lib/modules/$krel
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,dev,proc,sys,run,tmp,etc}
mkdir -p "$root$optdir" "$mods/extra"

# copy_with_libs FILE DEST: an executable in place of what DEST was, and
# the shared libraries it needs (the loader too) at their own paths.
copy_with_libs()
{
	local lib

	rm -f "$root$2"
	cp -L "$1" "$root$2"
	ldd "$1" >/dev/null 2>&1 || return 0
	! ldd "$1" | grep 'not found' >&2 ||
		die "$1 needs libraries that are not installed (above)"
	for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
		mkdir -p "$root${lib%/*}"
		cp -L "$lib" "$root$lib"
	done
}

cp "$busybox" "$root/bin/busybox"
while read -r applet; do
	[ "$applet" = bin/busybox ] || ln -s /bin/busybox "$root/$applet"
done < <(busybox --list-full)
copy_with_libs "$(command -v dash)" /bin/dash
ln -sfn dash "$root/bin/sh"
kmod=$("$TOOLS/vm/build-kmod.sh") || die "no kmod for the guest"
cp "$kmod" "$root/bin/kmod"
for tool in modprobe insmod rmmod lsmod depmod modinfo; do
	ln -sf /bin/kmod "$root/sbin/$tool"
done
copy_with_libs "$(command -v dmesg)" /bin/dmesg
[ "$via" = direct ] || copy_with_libs "$(command -v timeout)" /usr/bin/timeout
install -m 755 "$TOOLS/vm/guest-init.sh" "$root/init"
echo "$via" >"$root/etc/module_async.via"

cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$mods/" 2>/dev/null || true
for mod in "${kernel_modules[@]}"; do
	mapfile -t files < <(module_files "$moddir" "$mod")
	if [ -n "${files[0]:-}" ]; then
		(cd "$moddir" && cp --parents "${files[@]}" "$mods/")
	elif grep -qx "\(.*/\)\?${mod//[-_]/[-_]}\.ko" "$moddir/modules.builtin" 2>/dev/null; then
		log "$mod is built into $krel"
	else
		die "kernel $krel has no module $mod (neither in modules.dep nor built in)"
	fi
done

cp -a "$suite/." "$root$optdir/"
while IFS= read -r -d '' file; do
	copy_with_libs "$file" "$optdir/${file#"$suite"/}"
done < <(find "$suite" -type f -executable -print0)
# Once, without debug information (kallsyms keeps their symbols): 35 kB,
# not 1.4 MB twice, for the guest to unpack.
kos=("$suite/${sub}modules"/*.ko)
[ -f "${kos[0]}" ] || die "no test modules in $suite/${sub}modules/"
for ko in "${kos[@]}"; do
	strip --strip-debug -o "$mods/extra/${ko##*/}" "$ko"
done
rm -r "$root$optdir/${sub}modules"
ln -s "$(realpath -m --relative-to="$root$optdir/$sub" "$mods/extra")" "$root$optdir/${sub}modules"
depmod -b "$root" "$krel"

sed -n 's|^[A-Z_]*=\(/run/[^[:space:]]*\)[[:space:]]*# FIFO:.*|\1|p' "$TOOLS/vm/guest-init.sh" |
	while IFS= read -r fifo; do mkfifo -m 600 "$root$fifo"; done
# The kernel opens /dev/console before /init mounts devtmpfs.
[ "$(id -u)" -ne 0 ] || mknod -m 600 "$root/dev/console" c 5 1

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
