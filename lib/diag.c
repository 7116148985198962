// SPDX-License-Identifier: GPL-2.0
/*
 * Diagnostics and clocks shared by the module_async library.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "diag.h"

static diag_hook diag_current_hook;

void diag_set_hook(diag_hook hook)
{
	diag_current_hook = hook;
}

void diag(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);

	if (diag_current_hook)
		diag_current_hook(line);
	else
		fprintf(stderr, "%s\n", line);
}

long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void sleep_ms(int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
