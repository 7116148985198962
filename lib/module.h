/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading kernel modules with a bound.
 *
 * A load is finit_module(2) of a .ko file with a parameter string, made by a
 * child process under a watchdog (child.h), split in start and wait so that
 * the caller can observe the module while its init (or do_init_module()'s
 * wait for async work) is still running, open a gate, and then wait again.
 * An unload is delete_module(2) with O_NONBLOCK, the same way.
 */
#ifndef MA_MODULE_H
#define MA_MODULE_H

#include <stdbool.h>
#include <stddef.h>

#include "child.h"

#define MA_MODULE_NAME_LEN	56	/* the kernel's MODULE_NAME_LEN */
#define MODLIST_MAX		1024

struct module_load {
	/* Set by the caller before module_load_start(). */
	const char *path;		/* the .ko file */
	const char *params;		/* parameter string, or NULL */
	const char *knob_after;		/* knob read the moment the load returns */

	/* Set by the library. */
	char name[MA_MODULE_NAME_LEN];	/* module name, from the file name */
	struct child child;
};

/* Start loading @load->path in a child; 0 or -errno. */
int module_load_start(struct module_load *load);

/* Wait up to @timeout_ms for the load to return (see child_wait()). */
enum child_status module_load_wait(struct module_load *load, int timeout_ms);

/*
 * The load's outcome once it returned: 0, -errno from finit_module(2), or
 * -ECHILD if the child died without a report.
 */
int module_load_result(const struct module_load *load);

/* Load and wait: 0, -errno, or -ETIMEDOUT (the child is left running). */
int module_load(const char *path, const char *params, int timeout_ms);

/* delete_module(@name, O_NONBLOCK) in a child: 0, -errno or -ETIMEDOUT. */
int module_unload(const char *name, int timeout_ms);

/* "kyber-iosched" and "kyber_iosched" are the same module. */
void module_name_normalize(char *dst, const char *src, size_t len);

/* The module's name as the kernel will know it, from its file's path. */
void module_name_from_path(char *dst, const char *path, size_t len);

/* Read /sys/module/<name>/initstate ("live", "coming", "going"). */
int module_state(const char *name, char *buf, size_t len);
bool module_is_live(const char *name);

/*
 * Does a modules.dep or modules.builtin style file list @name? (Lines
 * "kernel/block/kyber-iosched.ko.xz: ...", or just the path.)
 */
bool modules_file_lists(const char *file, const char *name);

/*
 * The vermagic a module file was built with ("6.1.0-9-amd64 SMP
 * mod_unload ..."), from its .modinfo "vermagic=" entry, in @buf; "" if it
 * has none. 0, or -errno if the file cannot be read.
 */
int module_file_vermagic(const char *path, char *buf, size_t len);

/* Can modprobe load @name for the running kernel? Is it built in? */
bool module_available(const char *name);
bool module_builtin(const char *name);

/*
 * Run modprobe (the kernel's, from /proc/sys/kernel/modprobe) with @argv:
 * its exit status, -errno if it could not run, -ETIMEDOUT.
 */
int modprobe(const char *const argv[], int timeout_ms);

/* Run @path instead of the kernel's modprobe (tests); NULL restores it. */
void modprobe_set_path(const char *path);

/* The loaded modules, as /proc/modules lists them (newest first). */
struct modlist {
	unsigned int nr;
	char name[MODLIST_MAX][MA_MODULE_NAME_LEN];
};

int modlist_read(struct modlist *list);
int modlist_read_file(struct modlist *list, const char *file);
bool modlist_has(const struct modlist *list, const char *name);

/* Log the modules /proc/modules shows as still loading; returns how many. */
int modules_dump_loading(void);

/*
 * Of the modules @file (as /proc/modules) lists and @before does not: those
 * named in @ours (NULL-ended) and those they use, directly or not, in
 * @mine. Another's (udev's, say) are not. 0 or -errno.
 */
int modlist_ours(const char *file, const struct modlist *before,
		 const char * const ours[], struct modlist *mine);

/*
 * Unload the modules modlist_ours() finds loaded since @before was read,
 * dependents first, each with a bound of @timeout_ms. Returns how many are
 * left loaded, or -ETIMEDOUT at the first unload that did not return (the
 * kernel is stuck).
 */
int modlist_unload_new(const struct modlist *before, const char * const ours[],
		       int timeout_ms);

#endif /* MA_MODULE_H */
