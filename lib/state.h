/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a test must leave as it found it, read and compared: the loaded
 * modules with their reference counts (/proc/modules), and watched files:
 * a knob's value ("absent" when it is missing), or, for a path ending in
 * "*", the names in its directory that begin so (the devices a module
 * made, say: "/sys/block/nullb*").
 */
#ifndef MA_STATE_H
#define MA_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "module.h"

#define STATE_WATCHED_MAX	16
#define STATE_VALUE_LEN		256

struct state_module {
	char name[MA_MODULE_NAME_LEN];
	long refs;			/* the "used by" count; -1 unknown */
};

struct ma_state {
	unsigned int nr_modules;
	struct state_module modules[MODLIST_MAX];
	unsigned int nr_watched;
	const char *watched[STATE_WATCHED_MAX];
	char value[STATE_WATCHED_MAX][STATE_VALUE_LEN];
};

/*
 * Read the state: the modules from @proc_modules (a file in the format
 * of /proc/modules), the NULL-ended @watched paths (see above). 0 or -errno
 * if the modules cannot be read.
 */
int state_read(struct ma_state *st, const char *proc_modules,
	       const char * const watched[]);

/*
 * How @now differs from @before, in @buf ("" if it does not), each
 * difference in words ("left loaded: ma_plain", "unloaded: loop",
 * "null_blk used by 1, was 0", "<path>: Y, was N"), "; " between them.
 * Reference counts are compared, and a module loaded since is named, for
 * the modules in @counted (NULL-ended; NULL: every module): on a machine
 * in use, others change for reasons of their own (a sound card's, while a
 * program plays; udev's loads).
 * Returns the number of differences.
 */
int state_diff(const struct ma_state *before, const struct ma_state *now,
	       const char * const counted[], char *buf, size_t len);

/* A "Key:  N kB" line of a /proc/meminfo file, in kB; 0 or -errno. */
int meminfo_kb(const char *file, const char *key, long *kb);

/*
 * The free pages on the per-CPU lists (the "count:" of every CPU's pageset
 * in a /proc/zoneinfo file), in kB; 0 or -errno.
 */
int pcp_free_kb(const char *file, long *kb);

#endif /* MA_STATE_H */
