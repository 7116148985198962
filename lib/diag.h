/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Diagnostics and clocks shared by the module_async library.
 *
 * The library reports evidence (a stuck task's stack, a kernel warning) as
 * lines of text through one hook, so that the runner can print them as KTAP
 * "#" lines and the library's tests can capture them. The library never
 * decides verdicts and never prints to stdout on its own.
 */
#ifndef MA_DIAG_H
#define MA_DIAG_H

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

#ifndef __noreturn
#define __noreturn	__attribute__((__noreturn__))
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr)	(sizeof(arr) / sizeof((arr)[0]))
#endif

typedef void (*diag_hook)(const char *line);

/* Route diagnostic lines to @hook (NULL: stderr, the default). */
void diag_set_hook(diag_hook hook);

/* Emit one diagnostic line (no trailing newline needed). */
void diag(const char *fmt, ...) __printf(1, 2);

/* CLOCK_MONOTONIC in microseconds. */
long long now_us(void);

/* Sleep for @ms milliseconds: the step of a bounded polling loop. */
void sleep_ms(int ms);

#endif /* MA_DIAG_H */
