# SPDX-License-Identifier: GPL-2.0
# The test VM's kernel image, accelerator and argument initramfs (make lava's
# guest has no host to answer it); the VM is vm-run's.  Sourced after lib.sh.
# shellcheck shell=bash

# shellcheck disable=SC2034 # for lava.sh and vm-run
readonly QEMU_CMDLINE="console=ttyS0,115200 panic=-1"

# kvm_verdict_file: vm-run's verdict on KVM guests (kvm: they boot, tcg: silent)
# per host kernel and QEMU version: later runs need not wait for silence again.
kvm_verdict_file()
{
	qemu-system-x86_64 --version |
		awk -v f="$(cache_dir)/kvm-verdict/$(uname -r)_qemu-" 'NR == 1 { print f $4 }'
}

# qemu_accel auto|kvm|tcg: the first boot's accelerator: kvm, tcg, or probe
# (KVM, TCG if its guest stays silent).
qemu_accel()
{
	if [ "$1" != auto ]; then
		echo "$1"
	elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		echo tcg
	elif [ "$(cat "$(kvm_verdict_file)" 2>/dev/null)" = tcg ]; then
		log "KVM guests did not boot on this host before ($(kvm_verdict_file)): using TCG"
		echo tcg
	else
		echo probe
	fi
}

# unpacked_kernel BZIMAGE KERNEL: the cache entry of BZIMAGE (of entry KERNEL)
# unpacked: build-id and vmlinux if it has a PVH entry, which saves 8 of a
# TCG boot's 15 s (firmware and decompressing Debian's xz kernel).  An entry
# names its kernel's build ID or is not made (status 1, said); a write that
# fails (a full disk) is the run's failure (status 3), nothing committed.
unpacked_kernel()
{
	local entry stamp script id

	stamp="$(sha256sum "$1" | cut -d' ' -f1)  ${1##*/}"
	entry=$(cache_dir)/pvh/${stamp%% *}
	entry_lock "$entry"
	# cksum reads the 66 MB kernel in 0.02 s, md5sum (entry_verify) in 0.1 s.
	if [ -f "$entry/vmlinux" ] &&
	   [ "$(cksum <"$entry/vmlinux")" != "$(cat "$entry/vmlinux.cksum" 2>/dev/null)" ]; then
		log "${entry##*/}: vmlinux does not match its checksum"
		entry_remove "$entry"
	fi
	# One without a build ID (a full disk's, before writes were checked) is made again.
	if ! entry_valid "$entry" "$stamp" || [ ! -s "$entry/build-id" ]; then
		entry_remove "$entry"
		entry_tmp "$entry"
		# The kernel tree's own (its source's when built with O=), else that
		# of fetch-source.sh's linux-source tree: Debian's headers lack it.
		script=$2/kdir/source/scripts/extract-vmlinux
		[ -x "$script" ] || script=$2/kdir/scripts/extract-vmlinux
		[ -x "$script" ] || script=$("$TOOLS/kernel/fetch-source.sh" 2>/dev/null |
			tail -n 1)/scripts/extract-vmlinux
		[ -x "$script" ] || die "no scripts/extract-vmlinux"
		# The script's status is of no use (it exits 0 when its cat fails): cat's is.
		{ "$script" "$1" 2>/dev/null || :; } | cat >"$ENTRY_TMP/vmlinux" ||
			die "cannot write the unpacked kernel into the cache (${entry%/*})"
		if ! id=$(elf_build_id "$ENTRY_TMP/vmlinux"); then
			log "$1: $script finds no kernel with a build ID in it"
			entry_remove "$ENTRY_TMP"
			ENTRY_TMP=
			exec 9>&-
			return 1
		fi
		# A PVH entry point: Xen note 0x12, XEN_ELFNOTE_PHYS32_ENTRY.
		LC_ALL=C readelf -n "$ENTRY_TMP/vmlinux" 2>/dev/null |
			grep -Eq 'Xen .*(0x00000012|PHYS32_ENTRY)' || rm "$ENTRY_TMP/vmlinux"
		{ printf '%s\n' "$id" >"$ENTRY_TMP/build-id" &&
		  { [ ! -f "$ENTRY_TMP/vmlinux" ] ||
		    cksum <"$ENTRY_TMP/vmlinux" >"$ENTRY_TMP/vmlinux.cksum"; }; } ||
			die "cannot write the unpacked kernel's entry into the cache (${entry%/*})"
		entry_commit "$entry" "$stamp"
	fi
	exec 9>&-
	printf '%s\n' "$entry"
}

# boot_image KERNEL auto|bzimage: the image to boot of an entry directory (its
# vmlinuz) or a bzImage: its PVH kernel unpacked if any (auto), or itself.
boot_image()
{
	local image=${1%/} pvh='' rc=0

	[ ! -d "$image" ] || image=$image/vmlinuz
	[ -f "$image" ] || die "no kernel image at $image"
	if [ "$2" = auto ]; then
		pvh=$(unpacked_kernel "$image" "${1%/}")/vmlinux || rc=$?
		# 1: no build ID in it, said; the bzImage boots.
		[ "$rc" -le 1 ] || exit "$rc"
	fi
	[ "$rc" -ne 0 ] || [ ! -f "$pvh" ] || image=$pvh
	printf '%s\n' "$image"
}

# initrd_with_args BASE FILE ARGS...: FILE is BASE and, appended, a gzip'd cpio
# of etc/module_async.args (ARGS a line): the kernel unpacks archives in order.
# Failed (a full disk), it leaves neither FILE nor its scratch directory.
initrd_with_args()
{
	local base=$1 dest=$2 dir args=etc/module_async.args rc=0

	shift 2
	# Named by this process, for the next run to remove if it is killed.
	stale_remove "$dest.args."
	dir=$(mktemp -d "$dest.args.$$.XXXXXX") || return "$EXIT_INFRA"
	{ mkdir "$dir/etc" && printf '%s' "${@/%/$'\n'}" >"$dir/$args" && cp "$base" "$dest" &&
	  (cd "$dir" && echo "$args" | cpio --quiet -o -H newc -R 0:0) | gzip -n >>"$dest"; } ||
		rc=$EXIT_INFRA
	rm -rf "$dir"
	[ "$rc" -eq 0 ] || rm -f "$dest"
	return "$rc"
}
