// SPDX-License-Identifier: GPL-2.0
/*
 * ma_request_twin - ma_request built again under a second name
 *
 * A test module runs one async job per load (ma_job.h), so a second job
 * requesting a module while ma_request's does needs a second module: this
 * one, ma_request's code and knobs as they are (case
 * request_module_twice_from_async).
 */
#include "ma_request.c"
