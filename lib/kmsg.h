/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel log, read from /dev/kmsg one record at a time.
 *
 * A case opens the log at its start (kmsg_open(), positioned after the last
 * record) and scans it at its end: the WARNING lines the kernel printed
 * meanwhile, the hung-task detector's reports ("INFO: task modprobe:127
 * blocked for more than 10 seconds."), and the lines that mention a pattern
 * (a module name, a function), are the case's evidence. kmsg_open() with from_start reads
 * everything still in the buffer: a WARN_ON_ONCE() fires once per boot, so
 * a warning may be older than the case that looks for it.
 */
#ifndef MA_KMSG_H
#define MA_KMSG_H

#include <stdbool.h>
#include <stddef.h>

#define KMSG_MAX_LINES		32	/* evidence kept, the rest counted */
#define KMSG_LINE_MAX		256	/* a line longer than this is cut */

struct kmsg_scan {
	int fd;				/* the record source, -1 if none */
	const char *pattern;		/* also keep lines with this; or NULL */
	unsigned int nr_records;	/* records read */
	unsigned int nr_lost;		/* times records were overwritten unread */
	unsigned int nr_warnings;	/* "WARNING:" lines */
	unsigned int nr_matches;	/* lines mentioning the pattern */
	unsigned int nr_hung;		/* hung-task reports ("INFO: task") */
	bool warning_matches;		/* a WARNING line mentions the pattern */
	unsigned int nr_lines;		/* lines kept in lines[] */
	unsigned int nr_dropped;	/* lines that did not fit in lines[] */
	char lines[KMSG_MAX_LINES][KMSG_LINE_MAX];
};

/*
 * Open /dev/kmsg for @scan: at the end of the log (only what is printed
 * from now on counts) or, with @from_start, at its oldest record.
 */
int kmsg_open(struct kmsg_scan *scan, bool from_start);

/*
 * Scan any record source that returns one record per read(2) and EAGAIN
 * when empty, as /dev/kmsg does (tests use a SOCK_SEQPACKET socket).
 */
void kmsg_attach(struct kmsg_scan *scan, int fd);

/* Forget what was collected; the position in the log stays. */
void kmsg_reset(struct kmsg_scan *scan, const char *pattern);

/* Read every record available now; returns how many, or -errno. */
int kmsg_scan(struct kmsg_scan *scan);

/* Scan one record: "prio,seq,usec,flags;message\n[ KEY=value\n...]". */
void kmsg_scan_record(struct kmsg_scan *scan, const char *record, size_t len);

/*
 * Read every record available on @fd for at most @timeout_ms, calling @fn
 * with its message (NUL-terminated, without header and dictionary).
 * Returns how many records, or -errno.
 */
typedef void (*kmsg_fn)(void *arg, const char *msg);
int kmsg_each(int fd, kmsg_fn fn, void *arg, int timeout_ms);

/* Log the kept lines as diagnostics, each prefixed with @prefix. */
void kmsg_report(const struct kmsg_scan *scan, const char *prefix);

void kmsg_close(struct kmsg_scan *scan);

#endif /* MA_KMSG_H */
