// SPDX-License-Identifier: GPL-2.0
/*
 * ma_elv - an async job that switches a disk's I/O scheduler
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
 *
 * Knobs (see ma_job.h): disk, target, start, started, done, result.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>

#include "ma_job.h"

#define MA_ELV_NAME_LEN		32	/* block device and scheduler names */

static char disk[MA_ELV_NAME_LEN];
module_param_string(disk, disk, sizeof(disk), 0644);
MODULE_PARM_DESC(disk, "the block device, e.g. nullb0");
static char target[MA_ELV_NAME_LEN];
module_param_string(target, target, sizeof(target), 0644);
MODULE_PARM_DESC(target, "the scheduler to switch to, e.g. kyber");
module_param_named(gate_ms, ma_job.gate_ms, uint, 0444);
MODULE_PARM_DESC(gate_ms, "bound of the exit's wait for the job, in ms");
module_param_cb(start, &ma_start_ops, NULL, 0644);
MODULE_PARM_DESC(start, "write 1 to queue the job");
module_param_named(started, ma_job.started, int, 0444);
MODULE_PARM_DESC(started, "1 once the job runs");
module_param_named(done, ma_job.done, int, 0444);
MODULE_PARM_DESC(done, "1 once the write has returned");
module_param_named(result, ma_job.result, int, 0444);
MODULE_PARM_DESC(result, "0 or -errno of the write");

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
	char name[MA_ELV_NAME_LEN];
	char *path;
	int ret;

	kernel_param_lock(THIS_MODULE);
	strscpy(name, target, sizeof(name));
	path = kasprintf(GFP_KERNEL, "/sys/block/%s/queue/scheduler", disk);
	kernel_param_unlock(THIS_MODULE);

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

static int __init ma_elv_init(void)
{
	return 0;
}
module_init(ma_elv_init);

static void __exit ma_elv_exit(void)
{
	ma_job_exit();
}
module_exit(ma_elv_exit);

MODULE_DESCRIPTION("module_async: an async job switches an I/O scheduler");
MODULE_LICENSE("GPL");
