# SPDX-License-Identifier: GPL-2.0
#
# QEMU for the test VM: which accelerator, which image, the suite's
# arguments in the initramfs, start and stop.
# Sourced by vm-run.sh and vm-boot.sh after tools/lib.sh; every function
# takes what it needs as arguments and prints what it finds.
#
# KVM is used when /dev/kvm is usable and the guest's kernel prints its
# first line within a bound (vm-boot.sh watches that); a silent KVM guest
# (it happens: /dev/kvm exists but the guest hangs) is killed and the boot
# restarts under TCG.  The verdict is remembered per host kernel and QEMU
# version, only so that later runs need not pay the bound again.
#
# A bzImage is booted through its PVH entry point where it has one: the ELF
# kernel inside it is unpacked once into the cache ($CACHE/pvh/<sha256>/) by
# the kernel tree's scripts/extract-vmlinux.  Under TCG that saves most of
# the boot (firmware and decompressor take about 8 of 15 s with Debian's
# xz-compressed kernel).

# shellcheck shell=bash

readonly QEMU_STOP_TICKS=20	# 0.1 s each: TERM, then KILL
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

# pvh_image BZIMAGE KERNEL: the path of the unpacked PVH-bootable ELF kernel
# of BZIMAGE (of kernel entry KERNEL, or itself) in the cache, or nothing if
# it has none (either verdict is made once, atomically).
pvh_image()
{
	local entry stamp script

	stamp="$(sha256sum "$1" | cut -d' ' -f1)  ${1##*/}"
	entry=$(cache_dir)/pvh/${stamp%% *}
	entry_lock "$entry"
	if ! entry_valid "$entry" "$stamp"; then
		entry_remove "$entry"
		entry_tmp "$entry"
		script=$(extract_vmlinux_script "$2") || die "no scripts/extract-vmlinux"
		if ! "$script" "$1" >"$ENTRY_TMP/vmlinux" 2>/dev/null ||
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
	dir=$(mktemp -d "$dest.args.XXXXXX")
	mkdir "$dir/etc"
	: >"$dir/$args"
	[ $# -eq 0 ] || printf '%s\n' "$@" >"$dir/$args"
	cp "$base" "$dest"
	(cd "$dir" && echo "$args" | cpio --quiet -o -H newc -R 0:0) | gzip -n >>"$dest"
	rm -rf "$dir"
}

# Escape a path for a -chardev option value.
chardev_path()
{
	printf '%s\n' "${1//,/,,}"
}

# qemu_start ACCEL IMAGE INITRD CONSOLE RESULTS LOG MEMORY SMP: boot the
# guest in the background and print QEMU's pid.  Its console (ttyS0) is
# appended to CONSOLE, its results channel (ttyS1) written to RESULTS,
# QEMU's own messages to LOG.
qemu_start()
{
	local accel=$1 image=$2 initrd=$3 console=$4 results=$5 qlog=$6 cpu=max

	[ "$accel" = kvm ] && cpu=host
	qemu-system-x86_64 \
		-nodefaults -display none -monitor none -no-reboot \
		-accel "$accel" -cpu "$cpu" -m "$7" -smp "$8" \
		-kernel "$image" -initrd "$initrd" -append "$QEMU_CMDLINE" \
		-chardev "file,id=console,path=$(chardev_path "$console"),append=on" \
		-chardev "file,id=results,path=$(chardev_path "$results")" \
		-serial chardev:console -serial chardev:results \
		</dev/null >"$qlog" 2>&1 &
	echo $!
}

# qemu_alive PID
qemu_alive()
{
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null
}

# qemu_stop PID: TERM, then KILL if it is still there.
qemu_stop()
{
	local i

	qemu_alive "$1" || return 0
	kill -TERM "$1" 2>/dev/null || true
	for ((i = 0; i < QEMU_STOP_TICKS; i++)); do
		qemu_alive "$1" || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
}
