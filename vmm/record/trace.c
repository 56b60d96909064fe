// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - the trace directory: refusal of non-empty directories, vm.json, ring files,
 * events.jsonl, and removal of everything on a startup error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "test-hook.h"
#include "trace-keys.h"
#include "trace.h"

struct trace {
	char *dir;
	bool made_dir;      /* we created @dir (remove it on abort) */
	unsigned int nr_rings;
	struct ring_writer **rings;
	FILE *events;
	uint64_t vm_id;
	json_t *vm;         /* vm.json's content */
	struct trace_collector_config collector;
	struct seg_budget budget; /* stream mode, shared by the vCPUs' writers */
};

const char *trace__cpl_name(enum vbts_cpl_filter cpl)
{
	switch (cpl) {
	case VBTS_CPL_USER:
		return "user";
	case VBTS_CPL_KERNEL:
		return "kernel";
	default:
		return "all";
	}
}

uint64_t trace__host_available_memory(void)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib << 10;
}

int trace__check_budget(uint64_t records, unsigned int vcpus, uint64_t avail, char *err,
			size_t errlen)
{
	uint64_t per_ring, total, limit = TRACE_RING_BUDGET;

	if (!records) {
		errmsg__set(err, errlen, "ring size 0: each ring needs at least one record");
		return -EINVAL;
	}
	if (avail && avail < limit)
		limit = avail;
	if (__builtin_mul_overflow(records, (uint64_t)sizeof(struct vbts_record), &per_ring) ||
	    __builtin_add_overflow(per_ring, (uint64_t)VBTS_RING_HEADER_SIZE, &per_ring) ||
	    __builtin_mul_overflow(per_ring, (uint64_t)(vcpus ? vcpus : 1), &total) ||
	    total > limit) {
		errmsg__set(err, errlen,
			"ring size %" PRIu64 " records x %u vCPUs is beyond the memory budget "
			"of %" PRIu64 " MiB for ring files",
			records, vcpus, limit >> 20);
		return -E2BIG;
	}
	return 0;
}

void trace__collector_defaults(struct trace_collector_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = TRACE_MODE_WRAP;
	c->ring_records = TRACE_DEFAULT_RING_RECORDS;
	c->on_full = TRACE_ON_FULL_STALL;
}

/* Free bytes for an unprivileged writer on the file system of @dir (or of its parent). */
static int free_space(const char *dir, uint64_t *bytes)
{
	struct statvfs sv;
	char *copy;
	int ret;

	if (!statvfs(dir, &sv)) {
		*bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
		return 0;
	}
	copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	ret = statvfs(dirname(copy), &sv) ? -errno : 0;
	free(copy);
	if (!ret)
		*bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	return ret;
}

int trace__collector_check(struct trace_collector_config *c, unsigned int vcpus,
			   const char *dir, uint64_t avail, char *err, size_t errlen)
{
	uint64_t seg_bytes, mem, limit = TRACE_RING_BUDGET, space = 0, min_disk;
	unsigned int n = vcpus ? vcpus : 1;

	if (c->mode == TRACE_MODE_WRAP)
		return trace__check_budget(c->ring_records, vcpus, avail, err, errlen);
	if (c->mode != TRACE_MODE_STREAM) {
		errmsg__set(err, errlen, "unknown trace mode %u", c->mode);
		return -EINVAL;
	}
	if (c->on_full != TRACE_ON_FULL_STALL && c->on_full != TRACE_ON_FULL_DROP) {
		errmsg__set(err, errlen, "unknown on-full action %u", c->on_full);
		return -EINVAL;
	}
	if (!c->segment_records)
		c->segment_records = TRACE_DEFAULT_SEGMENT_RECORDS;
	if (c->segment_records < 2 || c->segment_records > TRACE_MAX_SEGMENT_RECORDS) {
		errmsg__set(err, errlen, "segment size %" PRIu64 " records: the limit is 2 to %llu",
			c->segment_records, TRACE_MAX_SEGMENT_RECORDS);
		return c->segment_records < 2 ? -EINVAL : -E2BIG;
	}
	/* Memory: each vCPU maps its segment files and compresses them (seg-writer.h). */
	seg_bytes = VBTS_SEG_HEADER_SIZE + c->segment_records * sizeof(struct vbts_record);
	if (avail && avail < limit)
		limit = avail;
	mem = seg_bytes * SEG_WRITER_MEM_SEGMENTS * n;
	if (mem > limit) {
		errmsg__set(err, errlen,
			"segment size %" PRIu64 " records x %u vCPUs needs %" PRIu64
			" MiB, beyond the memory budget of %" PRIu64 " MiB",
			c->segment_records, n, mem >> 20, limit >> 20);
		return -E2BIG;
	}
	if (free_space(dir, &space) < 0)
		space = 0;
	if (!c->disk_budget) {
		c->disk_budget = TRACE_DEFAULT_DISK_BUDGET;
		if (space && space / 2 < c->disk_budget)
			c->disk_budget = space / 2;
	} else if (space && c->disk_budget > space) {
		errmsg__set(err, errlen,
			"disk budget %" PRIu64 " MiB is beyond the %" PRIu64
			" MiB free on the trace directory's file system",
			c->disk_budget >> 20, space >> 20);
		return -E2BIG;
	}
	/* A full segment is closed once the next one is open: two per vCPU at a time. */
	min_disk = 2 * seg_bytes * n;
	if (c->disk_budget < min_disk) {
		errmsg__set(err, errlen,
			"disk budget %" PRIu64 " KiB is below two segments per vCPU (%" PRIu64
			" KiB: --segment RECORDS smaller, or more free space)",
			c->disk_budget >> 10, (min_disk + 1023) >> 10);
		return -ENOSPC;
	}
	return 0;
}

/* 0 when @dir is an empty directory, -ENOTEMPTY / -ENOTDIR / -errno otherwise. */
static int dir_is_empty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			ret = -ENOTEMPTY;
			break;
		}
	}
	closedir(d);
	return ret;
}

/* Can a directory be made at @dir (which does not exist)? 0 or -errno, @err set. */
static int check_parent(const char *dir, char *err, size_t errlen)
{
	char *copy = strdup(dir), *parent;
	struct stat st;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	/* dirname() may return a string of its own ("." for a bare name) */
	parent = dirname(copy);
	if (stat(parent, &st) < 0)
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	else if (access(parent, W_OK | X_OK) < 0)
		ret = -errno;
	free(copy);
	if (ret < 0)
		errmsg__set(err, errlen, "cannot create trace directory %s: %s", dir, strerror(-ret));
	return ret;
}

int trace__check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	if (stat(dir, &st) < 0) {
		ret = -errno;
		if (ret == -ENOENT && lstat(dir, &st) == 0) {
			errmsg__set(err, errlen, "trace directory %s is a symbolic link to nothing", dir);
			return -ENOENT;
		}
		if (ret == -ENOENT)
			return check_parent(dir, err, errlen);
		errmsg__set(err, errlen, "trace directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		errmsg__set(err, errlen, "trace directory %s is not a directory", dir);
		return -ENOTDIR;
	}
	ret = dir_is_empty(dir);
	if (ret == -ENOTEMPTY)
		errmsg__set(err, errlen, "trace directory %s exists and is not empty", dir);
	else if (ret < 0)
		errmsg__set(err, errlen, "trace directory %s: %s", dir, strerror(-ret));
	return ret;
}

static char *path_in(const struct trace *t, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", t->dir, name) < 0)
		return NULL;
	return p;
}

static void remove_in(const struct trace *t, const char *name)
{
	char *p = path_in(t, name);

	if (p)
		unlink(p);
	free(p);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* vm.json, replaced whole: written next to it, then renamed over it. */
static int save_vm_json(struct trace *t)
{
	char *path, *tmp;
	int ret, fd;

	path = path_in(t, VM_JSON_FILE);
	tmp = path_in(t, "." VM_JSON_FILE ".tmp");
	if (!path || !tmp) {
		ret = -ENOMEM;
		goto out;
	}
	/* A new file, whatever was under the name: never a FIFO's open, never through a link. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = json_dumpfd(t->vm, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	free(tmp);
	free(path);
	return ret;
}

/* vm.json's "attached": {"pid": N, "via": "pid"|"qemu"|"libvirt"[, "domain": NAME]}. */
static int attach_info(json_t *o, const struct trace_config *cfg)
{
	json_t *a = json_pack("{s:i, s:s}", VM_KEY_ATTACHED_PID, cfg->attach_pid,
			      VM_KEY_ATTACHED_VIA, cfg->attach_via ? cfg->attach_via : "pid");

	if (!a)
		return -EINVAL;
	if (cfg->attach_domain &&
	    json_object_set_new(a, VM_KEY_ATTACHED_DOMAIN, json_string(cfg->attach_domain))) {
		json_decref(a);
		return -EINVAL; /* not UTF-8 */
	}
	return json_object_set_new(o, VM_KEY_ATTACHED, a) ? -EINVAL : 0;
}

static int write_vm_json(struct trace *t, const struct trace_config *cfg, uint64_t start_ns)
{
	char id[17];
	json_t *o;

	snprintf(id, sizeof(id), "%016" PRIx64, t->vm_id);
	o = json_pack("{s:i, s:s, s:s?, s:o, s:i, s:i, s:s, s:s, s:I, s:I}",
		      VM_KEY_VERSION, 1,
		      VM_KEY_VM_ID, id,
		      cfg->linux_kernel ? VM_KEY_KERNEL : VM_KEY_IMAGE, cfg->image,
		      VM_KEY_BUILD_ID, cfg->build_id && cfg->build_id[0] ?
				json_string(cfg->build_id) : json_null(),
		      VM_KEY_VCPUS, (int)cfg->vcpus,
		      VM_KEY_MEMORY_MIB, (int)cfg->memory_mib,
		      VM_KEY_BACKEND, cfg->backend,
		      VM_KEY_CPL, trace__cpl_name(cfg->cpl),
		      VM_KEY_RING_RECORDS, (json_int_t)cfg->collector.ring_records,
		      VM_KEY_START_TIME_NS, (json_int_t)start_ns);
	if (!o)
		return -EINVAL; /* e.g. an image path that is not UTF-8 */
	if (cfg->collector.mode == TRACE_MODE_STREAM &&
	    (json_object_set_new(o, VM_KEY_MODE, json_string(VM_MODE_STREAM)) ||
	     json_object_set_new(o, VM_KEY_SEGMENT_RECORDS,
				 json_integer((json_int_t)cfg->collector.segment_records)))) {
		json_decref(o);
		return -ENOMEM;
	}
	if (cfg->system_map &&
	    json_object_set_new(o, VM_KEY_SYSTEM_MAP, json_string(cfg->system_map))) {
		json_decref(o);
		return -EINVAL;
	}
	if (cfg->attach_pid && attach_info(o, cfg)) {
		json_decref(o);
		return -EINVAL;
	}
	t->vm = o;
	return save_vm_json(t);
}

int trace__set_kaslr_slide(struct trace *t, uint64_t slide)
{
	if (slide > INT64_MAX || !t->vm)
		return -EINVAL;
	if (json_object_set_new(t->vm, VM_KEY_KASLR_SLIDE, json_integer((json_int_t)slide)))
		return -ENOMEM;
	return save_vm_json(t);
}

int trace__set_json(struct trace *t, const char *key, json_t *value)
{
	if (!value)
		return -ENOMEM;
	if (!t->vm) {
		json_decref(value);
		return -EINVAL;
	}
	if (json_object_set_new(t->vm, key, value))
		return -ENOMEM;
	return save_vm_json(t);
}

/* Stream mode: every segment file (the directory was empty when the trace began). */
static void remove_segments(struct trace *t)
{
	struct dirent *de;
	DIR *d = opendir(t->dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "vcpu", 4) ||
		    (!(len > 5 && !strcmp(de->d_name + len - 5, VBTS_SEG_SUFFIX)) &&
		     !(len > 9 && !strcmp(de->d_name + len - 9, VBTS_SEG_SUFFIX ".tmp"))))
			continue;
		remove_in(t, de->d_name);
	}
	closedir(d);
}

static void remove_all(struct trace *t)
{
	char name[64];

	for (unsigned int i = 0; i < t->nr_rings; i++) {
		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		remove_in(t, name);
	}
	if (t->collector.mode == TRACE_MODE_STREAM)
		remove_segments(t);
	remove_in(t, EVENTS_FILE);
	remove_in(t, VM_JSON_FILE);
	if (t->made_dir)
		rmdir(t->dir);
}

static void free_trace(struct trace *t)
{
	json_decref(t->vm);
	free(t->rings);
	free(t->dir);
	free(t);
}

struct trace *trace__create(const struct trace_config *cfg, char *err, size_t errlen)
{
	struct ring_writer_config rc = { 0 };
	struct trace *t;
	uint64_t start_ns;
	char *path;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->collector = cfg->collector;
	ret = trace__collector_check(&t->collector, cfg->vcpus, cfg->dir,
				     trace__host_available_memory(), err, errlen);
	if (ret < 0) {
		free(t);
		errno = -ret;
		return NULL;
	}
	t->budget.limit = t->collector.disk_budget;
	t->dir = strdup(cfg->dir);
	t->rings = calloc(cfg->vcpus ? cfg->vcpus : 1, sizeof(*t->rings));
	if (!t->dir || !t->rings) {
		ret = -ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto err_free;
	}
	if (mkdir(cfg->dir, 0777) == 0) {
		t->made_dir = true;
	} else if (errno == EEXIST) {
		ret = trace__check_dir(cfg->dir, err, errlen);
		if (ret < 0)
			goto err_free;
	} else {
		ret = -errno;
		errmsg__set(err, errlen, "cannot create trace directory %s: %s", cfg->dir,
			strerror(errno));
		goto err_free;
	}
	test_hook__stop_at("trace-dir");
	if (getrandom(&t->vm_id, sizeof(t->vm_id), 0) != sizeof(t->vm_id))
		t->vm_id = realtime_ns() ^ ((uint64_t)getpid() << 32);
	t->vm_id |= !t->vm_id; /* never 0: a reader refuses a file of vm_id 0 */
	start_ns = realtime_ns();
	ret = write_vm_json(t, cfg, start_ns);
	if (ret < 0) {
		errmsg__set(err, errlen, "cannot write %s/vm.json: %s", cfg->dir, strerror(-ret));
		goto err_remove;
	}
	test_hook__stop_at("vm.json");
	rc.capacity = t->collector.ring_records;
	rc.mode = VBTS_RING_WRAP;
	rc.vm_id = t->vm_id;
	rc.start_time_ns = start_ns;
	for (unsigned int i = 0; i < cfg->vcpus; i++) {
		char name[32];

		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		if (t->collector.mode == TRACE_MODE_STREAM)
			snprintf(name, sizeof(name), "vcpu%u%s", i, VBTS_SEG_OPEN_SUFFIX);
		path = path_in(t, name);
		if (!path) {
			ret = -ENOMEM;
			errmsg__set(err, errlen, "out of memory");
			goto err_remove;
		}
		rc.vcpu_id = i;
		if (t->collector.mode == TRACE_MODE_STREAM) {
			struct seg_writer_config sc = {
				.dir = t->dir,
				.vcpu_id = i,
				.vm_id = t->vm_id,
				.start_time_ns = start_ns,
				.segment_records = t->collector.segment_records,
				.budget = &t->budget,
				.on_full = t->collector.on_full == TRACE_ON_FULL_DROP ?
					   SEG_ON_FULL_DROP : SEG_ON_FULL_STALL,
				.stop = cfg->stop,
				.stop_ctx = cfg->stop_ctx,
			};

			t->rings[i] = ring_writer__create_stream(&sc);
		} else {
			t->rings[i] = ring_writer__create(path, &rc);
		}
		if (!t->rings[i]) {
			ret = -errno;
			errmsg__set(err, errlen, "cannot create %s: %s", path, strerror(errno));
			free(path);
			goto err_remove;
		}
		free(path);
		t->nr_rings = i + 1;
		test_hook__stop_at(name);
	}
	path = path_in(t, EVENTS_FILE);
	if (!path) {
		ret = -ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto err_remove;
	}
	t->events = fopen(path, "wxe");
	if (!t->events) {
		ret = -errno;
		errmsg__set(err, errlen, "cannot create %s: %s", path, strerror(errno));
		free(path);
		goto err_remove;
	}
	free(path);
	return t;

err_remove:
	for (unsigned int i = 0; i < t->nr_rings; i++)
		ring_writer__close(t->rings[i]);
	remove_all(t);
err_free:
	free_trace(t);
	errno = -ret;
	return NULL;
}

void trace__collector(const struct trace *t, struct trace_collector_config *out)
{
	*out = t->collector;
	out->disk_budget = __atomic_load_n(&t->budget.limit, __ATOMIC_RELAXED);
	out->on_full = __atomic_load_n(&t->collector.on_full, __ATOMIC_RELAXED);
}

int trace__set_collector(struct trace *t, const struct trace_collector_config *c, char *err,
			 size_t errlen)
{
	struct trace_collector_config n = *c;
	int ret;

	if (n.mode != t->collector.mode ||
	    (n.mode == TRACE_MODE_WRAP && n.ring_records != t->collector.ring_records) ||
	    (n.mode == TRACE_MODE_STREAM && n.segment_records &&
	     n.segment_records != t->collector.segment_records)) {
		errmsg__set(err, errlen, "the mode and the ring or segment size are fixed once the "
			"trace files exist");
		return -EBUSY;
	}
	n.segment_records = t->collector.segment_records;
	/* The running trace's own segments are in the free space: count them in. */
	ret = trace__collector_check(&n, t->nr_rings, t->dir, 0, err, errlen);
	if (ret < 0)
		return ret;
	if (n.mode != TRACE_MODE_STREAM)
		return 0;
	__atomic_store_n(&t->budget.limit, n.disk_budget, __ATOMIC_RELAXED);
	__atomic_store_n(&t->collector.on_full, n.on_full, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < t->nr_rings; i++)
		seg_writer__set_on_full(ring_writer__stream(t->rings[i]),
					n.on_full == TRACE_ON_FULL_DROP ? SEG_ON_FULL_DROP :
					SEG_ON_FULL_STALL);
	return 0;
}

uint64_t trace__lost(const struct trace *t)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < t->nr_rings; i++)
		lost += ring_writer__lost(t->rings[i]);
	return lost;
}

void trace__set_on_closed(struct trace *t, seg_closed_fn fn, void *ctx)
{
	for (unsigned int i = 0; i < t->nr_rings; i++) {
		struct seg_writer *w = ring_writer__stream(t->rings[i]);

		if (w)
			seg_writer__set_on_closed(w, fn, ctx);
	}
}

struct ring_writer *trace__ring(struct trace *t, unsigned int vcpu)
{
	return vcpu < t->nr_rings ? t->rings[vcpu] : NULL;
}

FILE *trace__events(struct trace *t)
{
	return t->events;
}

uint64_t trace__vm_id(const struct trace *t)
{
	return t->vm_id;
}

int trace__close(struct trace *t)
{
	int ret = 0, r;

	if (!t)
		return 0;
	for (unsigned int i = 0; i < t->nr_rings; i++) {
		r = ring_writer__close(t->rings[i]);
		if (r < 0 && !ret)
			ret = r;
	}
	if (t->events && fclose(t->events) && !ret)
		ret = -errno;
	free_trace(t);
	return ret;
}

void trace__abort(struct trace *t)
{
	if (!t)
		return;
	for (unsigned int i = 0; i < t->nr_rings; i++)
		ring_writer__close(t->rings[i]);
	if (t->events)
		fclose(t->events);
	t->events = NULL;
	remove_all(t);
	free_trace(t);
}
