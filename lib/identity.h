/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which kernel runs: its release (uname -r) and its GNU build ID, so that a
 * harness can tell the kernel it booted from the one it meant to boot.
 *
 * The build ID is the linker's hash of the vmlinux (ld --build-id), kept in
 * its .notes section as an ELF note of type NT_GNU_BUILD_ID named "GNU";
 * the kernel exposes that section as /sys/kernel/notes (kernel/ksysfs.c),
 * and readelf -n shows the same ID in the vmlinux file. A kernel built
 * without it, or without sysfs, has none to tell.
 */
#ifndef MA_IDENTITY_H
#define MA_IDENTITY_H

#include <stddef.h>

#define KERNEL_NOTES	"/sys/kernel/notes"

/*
 * An ELF note's header (Elf32_Nhdr and Elf64_Nhdr alike), followed by its
 * name and its descriptor, each padded to 4 bytes.
 */
struct note_header {
	unsigned int name_size;
	unsigned int desc_size;
	unsigned int type;
};

/*
 * The GNU build ID among the ELF notes in file @notes (KERNEL_NOTES), as
 * lowercase hex in @hex (@len bytes, NUL included). Returns 0, or -errno:
 * the file's own error, -ENODATA when no note is a build ID, -EINVAL when
 * a note runs past the end of the file, -ENOSPC when @hex is too short.
 */
int kernel_build_id(const char *notes, char *hex, size_t len);

/*
 * The identity line, as a diag(): "kernel: RELEASE build-id HEX", or
 * "kernel: RELEASE build-id unknown (@notes: WHY)" where the notes cannot
 * be read or hold none.
 */
void kernel_identity(const char *notes);

#endif /* MA_IDENTITY_H */
