// SPDX-License-Identifier: GPL-2.0
/*
 * ma_elv - tests an I/O scheduler switch from an async job
 *
 * The 2013 deadlock as the block layer reaches it in 6.1: writing the name
 * of a scheduler that is not loaded yet to /sys/block/<disk>/queue/scheduler
 * makes elv_iosched_store() -> elevator_get() call
 * request_module("%s-iosched") and wait for modprobe. Done from an async
 * job (as device probing is), the scheduler module's do_init_module() waits
 * for all async work, this job included: a deadlock wherever the kernel
 * syncs all async work on module init.
 *
 * Writing 1 to "start" queues one job with async_schedule() (from the
 * writing task, after this module has loaded). The job writes "target" (for
 * example "kyber") to the "disk"'s (for example "nullb0") queue/scheduler
 * file through the file itself, filp_open() and kernel_write(), the way a
 * write(2) reaches elv_iosched_store(); it records 0 or -errno in "result"
 * and marks "done". The runner (case elevator_switch_from_async) waits for
 * "done" with a bound, checks which scheduler is active and restores the
 * one it found. The case runs only where it cannot deadlock, or when told.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "ma_job.h"

#define MA_ELV_NAME_LEN		32	/* block device and scheduler names */

static char disk[MA_ELV_NAME_LEN];
module_param_string(disk, disk, sizeof(disk), 0644);
MODULE_PARM_DESC(disk, "the block device, e.g. nullb0");
static char target[MA_ELV_NAME_LEN];
module_param_string(target, target, sizeof(target), 0644);
MODULE_PARM_DESC(target, "the scheduler to switch to, e.g. kyber");

MA_KNOB_GATE_MS();
MA_KNOB_START();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_RESULT("0 or -errno of the write");

static int ma_elv_write(const char *path, const char *name)
{
	size_t len = strlen(name);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;

	file = filp_open(path, O_WRONLY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = kernel_write(file, name, len, &pos);
	filp_close(file, NULL);
	if (ret < 0)
		return ret;
	return ret == len ? 0 : -EIO;
}

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	char name[MA_ELV_NAME_LEN], dev[MA_ELV_NAME_LEN];
	char *path;
	int ret;

	ma_knob_copy(name, target, sizeof(name));
	ma_knob_copy(dev, disk, sizeof(dev));
	path = kasprintf(GFP_KERNEL, "/sys/block/%s/queue/scheduler", dev);

	ma_job_begin();
	if (path) {
		pr_info("writing %s to %s from an async job\n", name, path);
		ret = ma_elv_write(path, name);
		kfree(path);
	} else {
		ret = -ENOMEM;
	}
	ma_job_end(ret);
}

module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: an async job switches an I/O scheduler");
MODULE_LICENSE("GPL");
