# SPDX-License-Identifier: GPL-2.0
#
# The kernel image and accelerator for the test VM, and the suite's
# arguments in an initramfs (for a guest no host answers: make lava); the
# VM itself is tools/vm/vm-run's.  Sourced after tools/lib.sh; every
# function takes what it needs as arguments and prints what it finds.
#
# KVM is used when /dev/kvm is usable and its guest prints its first line
# within a bound (vm-run watches that, else falls back to TCG).  The
# verdict is remembered per host kernel and QEMU version, only so that
# later runs need not pay the bound again.
#
# A bzImage is booted through its PVH entry point where it has one: the ELF
# kernel inside it is unpacked once into the cache ($CACHE/pvh/<sha256>/) by
# the kernel tree's scripts/extract-vmlinux.  Under TCG that saves most of
# the boot (firmware and decompressor take about 8 of 15 s with Debian's
# xz-compressed kernel).

# shellcheck shell=bash

# The guest kernel's command line (vm-run's QEMU and make lava's job).
# shellcheck disable=SC2034 # for lava.sh and vm-run
readonly QEMU_CMDLINE="console=ttyS0,115200 panic=-1"

# kvm_verdict_file: where the verdict on KVM guests of this host is kept.
kvm_verdict_file()
{
	local qver

	qver=$(qemu-system-x86_64 --version | head -n 1)
	qver=${qver##* version }
	qver=${qver%% *}
	printf '%s\n' "$(cache_dir)/kvm-verdict/$(uname -r)_qemu-$qver"
}

# kvm_remember VERDICT: kvm (its guests boot) or tcg (they do not).
kvm_remember()
{
	local file

	file=$(kvm_verdict_file)
	mkdir -p "$(dirname "$file")"
	printf '%s\n' "$1" >"$file.tmp.$$"
	mv "$file.tmp.$$" "$file"
}

# qemu_accel REQUESTED: the accelerator for the first boot, from auto, kvm
# or tcg: kvm, tcg, or probe (KVM, falling back to TCG if its guest stays
# silent).
qemu_accel()
{
	local usable=0

	[ ! -r /dev/kvm ] || [ ! -w /dev/kvm ] || usable=1
	case $1 in
	tcg) echo tcg ;;
	kvm)
		[ "$usable" = 1 ] || die "--accel kvm: /dev/kvm is not usable"
		echo kvm
		;;
	auto)
		if [ "$usable" = 0 ]; then
			echo tcg
		elif [ "$(cat "$(kvm_verdict_file)" 2>/dev/null)" = tcg ]; then
			log "KVM guests did not boot on this host before" \
				"($(kvm_verdict_file)): using TCG"
			echo tcg
		else
			echo probe
		fi
		;;
	esac
}

# extract_vmlinux_script KERNEL: the kernel tree's own scripts/extract-vmlinux:
# that of KERNEL's build tree (an entry's kdir, or its source when built
# with O=), else that of the linux-source tree tools/kernel/fetch-source.sh
# unpacks (Debian's headers do not ship it).
extract_vmlinux_script()
{
	local f src

	for f in "$1/kdir/source/scripts/extract-vmlinux" "$1/kdir/scripts/extract-vmlinux"; do
		[ ! -x "$f" ] || { printf '%s\n' "$f"; return 0; }
	done
	src=$("$TOOLS/kernel/fetch-source.sh" 2>/dev/null | tail -n 1) || return 1
	[ -x "$src/scripts/extract-vmlinux" ] || return 1
	printf '%s\n' "$src/scripts/extract-vmlinux"
}

# unpacked_kernel BZIMAGE KERNEL: the cache entry of BZIMAGE (of kernel
# entry KERNEL, or itself) unpacked by the kernel tree's
# scripts/extract-vmlinux: build-id, the unpacked kernel's GNU build ID
# (empty if it has none), and vmlinux, the unpacked kernel itself if QEMU can
# boot it (a PVH entry point).  Made once, atomically; an entry made before
# build IDs were kept gets its build-id under the entry's lock.  Every run
# checks vmlinux against the CRC made with it (vmlinux.cksum): cksum reads
# its 66 MB in 0.02 s, md5sum in 0.1 s.
unpacked_kernel()
{
	local entry stamp script

	stamp="$(sha256sum "$1" | cut -d' ' -f1)  ${1##*/}"
	entry=$(cache_dir)/pvh/${stamp%% *}
	entry_lock "$entry"
	if ! entry_valid "$entry" "$stamp" ||
	   { [ -f "$entry/vmlinux" ] && ! pvh_intact "$entry"; }; then
		entry_remove "$entry"
		entry_tmp "$entry"
		script=$(extract_vmlinux_script "$2") || die "no scripts/extract-vmlinux"
		"$script" "$1" >"$ENTRY_TMP/vmlinux" 2>/dev/null || : >"$ENTRY_TMP/vmlinux"
		elf_build_id "$ENTRY_TMP/vmlinux" >"$ENTRY_TMP/build-id" || true
		elf_has_pvh "$ENTRY_TMP/vmlinux" || rm -f "$ENTRY_TMP/vmlinux"
		[ ! -f "$ENTRY_TMP/vmlinux" ] ||
			cksum <"$ENTRY_TMP/vmlinux" >"$ENTRY_TMP/vmlinux.cksum"
		entry_commit "$entry" "$stamp"
	elif [ ! -f "$entry/build-id" ]; then
		if [ -f "$entry/vmlinux" ]; then
			elf_build_id "$entry/vmlinux"
		else
			script=$(extract_vmlinux_script "$2") || die "no scripts/extract-vmlinux"
			kernel_build_id "$1" "$script"
		fi >"$entry/build-id.tmp.$$" || true
		mv "$entry/build-id.tmp.$$" "$entry/build-id"
	fi
	exec 9>&-
	printf '%s\n' "$entry"
}

# pvh_image BZIMAGE KERNEL: the path of the unpacked PVH-bootable ELF kernel
# of BZIMAGE (of kernel entry KERNEL, or itself) in the cache, or nothing if
# it has none.
pvh_image()
{
	local entry

	entry=$(unpacked_kernel "$1" "$2")
	[ ! -f "$entry/vmlinux" ] || printf '%s\n' "$entry/vmlinux"
}

# boot_build_id KERNEL IMAGE: the GNU build ID of the kernel a run means to
# boot: the one KERNEL's entry says (its build-id, one line, written by the
# entry's maker from the vmlinux it linked or unpacked), else IMAGE's own
# (boot_image's: an ELF kernel's note, or that of the kernel unpacked from a
# bzImage); nothing where there is none.
boot_build_id()
{
	local kernel=${1%/}

	if [ -d "$kernel" ] && [ -f "$kernel/build-id" ]; then
		sed -n 1p "$kernel/build-id"
	elif ! elf_has_pvh "$2"; then
		cat "$(unpacked_kernel "$2" "$kernel")/build-id"
	else
		elf_build_id "$2" || true
	fi
}

# boot_image KERNEL BOOT: the image to boot, for a kernel entry directory
# (its vmlinuz, or its vmlinux) or a bzImage, with BOOT auto (the PVH entry
# if there is one), pvh or bzimage.
boot_image()
{
	local kernel=${1%/} boot=$2 image elf pvh

	if [ -d "$kernel" ]; then
		image=$kernel/vmlinuz elf=$kernel/vmlinux
	else
		image=$kernel elf=$kernel
	fi
	if [ "$boot" != bzimage ] && [ -f "$elf" ] && elf_has_pvh "$elf"; then
		image=$elf
	elif [ "$boot" != bzimage ] && [ -f "$image" ]; then
		pvh=$(pvh_image "$image" "$kernel") || pvh=''
		if [ -n "$pvh" ]; then
			image=$pvh
		elif [ "$boot" = pvh ]; then
			die "$image has no PVH entry point"
		fi
	fi
	[ -f "$image" ] || die "no kernel image at $image"
	printf '%s\n' "$image"
}

# pvh_intact ENTRY: its vmlinux has the CRC and size made with it.
pvh_intact()
{
	local want=''

	{ read -r want <"$1/vmlinux.cksum"; } 2>/dev/null || true
	if [ -z "$want" ]; then
		log "${1##*/}: no checksums to check it by"
		return 1
	fi
	[ "$(cksum <"$1/vmlinux")" = "$want" ] && return 0
	log "${1##*/}: vmlinux does not match its checksum"
	return 1
}

# elf_has_pvh FILE: an ELF kernel with a PVH entry point (Xen note 0x12,
# XEN_ELFNOTE_PHYS32_ENTRY), which QEMU can boot directly with -kernel.
elf_has_pvh()
{
	[ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n')" = 7f454c46 ] &&
		LC_ALL=C readelf -n "$1" 2>/dev/null | grep -Eq 'Xen .*(0x00000012|PHYS32_ENTRY)'
}

# initrd_with_args BASE FILE ARGS...: FILE is the initramfs BASE and,
# appended, a gzip'd cpio holding etc/module_async.args with ARGS, one a
# line: the suite's arguments for guest-init.sh.  The kernel unpacks
# concatenated archives in order, so a boot names its arguments without
# rebuilding the image.
initrd_with_args()
{
	local base=$1 dest=$2 dir args=etc/module_async.args

	shift 2
	# Named by this process, for the next run to remove if it is killed.
	stale_remove "$dest.args."
	dir=$(mktemp -d "$dest.args.$$.XXXXXX")
	mkdir "$dir/etc"
	: >"$dir/$args"
	[ $# -eq 0 ] || printf '%s\n' "$@" >"$dir/$args"
	cp "$base" "$dest"
	(cd "$dir" && echo "$args" | cpio --quiet -o -H newc -R 0:0) | gzip -n >>"$dest"
	rm -rf "$dir"
}
