/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module parameters as files: /sys/module/<module>/parameters/<knob>.
 *
 * The test modules are driven and observed through their parameters (see
 * modules/ma_job.h); the kernel's own knobs (module.async_probe) live in the
 * same place. Every wait for a knob is a polling loop with a short step and
 * a hard bound.
 */
#ifndef MA_KNOB_H
#define MA_KNOB_H

#include <stdbool.h>
#include <stddef.h>

/* Step of the polling loops: short against any timeout, long against a syscall. */
#define KNOB_POLL_STEP_MS	2

/* Set the directory that holds the modules (tests); NULL: "/sys/module". */
void knob_set_root(const char *dir);
const char *knob_root(void);

/*
 * Path of a module's knob, or of the module's directory if @knob is NULL.
 * It, sysfs_write() and knob_write() are async-signal-safe (open, write,
 * close, strlen, memcpy): the runner's signal handler calls them.
 */
int knob_path(char *buf, size_t len, const char *module, const char *knob);

bool knob_exists(const char *module, const char *knob);

/* Read a knob as text, without the trailing newline; 0 or -errno. */
int knob_read(const char *module, const char *knob, char *buf, size_t len);

/* Read a knob that holds an integer; 0, -errno or -EINVAL. */
int knob_read_long(const char *module, const char *knob, long *value);

/* Write @value to a knob; 0 or -errno (what the knob's set handler said). */
int knob_write(const char *module, const char *knob, const char *value);

/*
 * Wait until the knob reads @want, for at most @timeout_ms. A knob that is
 * missing or unreadable is polled again: the module may still be on its way.
 * Returns 0, or -ETIMEDOUT with the last value read in *@last (if not NULL;
 * LONG_MIN if nothing could be read).
 */
int knob_wait_long(const char *module, const char *knob, long want,
		   int timeout_ms, long *last);

/* Any sysfs file: read as text without the trailing newline, or write. */
int sysfs_read(const char *path, char *buf, size_t len);
int sysfs_write(const char *path, const char *value);

/*
 * The choice in force of a sysfs file that lists every choice, that one in
 * brackets ("none [kyber] bfq": "kyber"); 0, -errno, or -EINVAL if none
 * is bracketed.
 */
int sysfs_read_selected(const char *path, char *buf, size_t len);

#endif /* MA_KNOB_H */
