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
#include <time.h>
#include <unistd.h>

#include "ring-writer.h"
#include "test-hook.h"
#include "trace.h"

struct trace {
	char *dir;
	bool made_dir;      /* we created @dir (remove it on abort) */
	unsigned int nr_rings;
	struct ring_writer **rings;
	FILE *events;
	uint64_t vm_id;
	json_t *vm;         /* vm.json's content */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

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
		set_err(err, errlen, "ring size 0: each ring needs at least one record");
		return -EINVAL;
	}
	if (avail && avail < limit)
		limit = avail;
	if (__builtin_mul_overflow(records, (uint64_t)sizeof(struct vbts_record), &per_ring) ||
	    __builtin_add_overflow(per_ring, (uint64_t)VBTS_RING_HEADER_SIZE, &per_ring) ||
	    __builtin_mul_overflow(per_ring, (uint64_t)(vcpus ? vcpus : 1), &total) ||
	    total > limit) {
		set_err(err, errlen,
			"ring size %" PRIu64 " records x %u vCPUs is beyond the memory budget "
			"of %" PRIu64 " MiB for ring files",
			records, vcpus, limit >> 20);
		return -E2BIG;
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
	char *copy = strdup(dir);
	struct stat st;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	if (stat(dirname(copy), &st) < 0)
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	else if (access(copy, W_OK | X_OK) < 0)
		ret = -errno;
	free(copy);
	if (ret < 0)
		set_err(err, errlen, "cannot create trace directory %s: %s", dir, strerror(-ret));
	return ret;
}

int trace__check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	if (stat(dir, &st) < 0) {
		ret = -errno;
		if (ret == -ENOENT && lstat(dir, &st) == 0) {
			set_err(err, errlen, "trace directory %s is a symbolic link to nothing", dir);
			return -ENOENT;
		}
		if (ret == -ENOENT)
			return check_parent(dir, err, errlen);
		set_err(err, errlen, "trace directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "trace directory %s is not a directory", dir);
		return -ENOTDIR;
	}
	ret = dir_is_empty(dir);
	if (ret == -ENOTEMPTY)
		set_err(err, errlen, "trace directory %s exists and is not empty", dir);
	else if (ret < 0)
		set_err(err, errlen, "trace directory %s: %s", dir, strerror(-ret));
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
	int ret;

	path = path_in(t, "vm.json");
	tmp = path_in(t, ".vm.json.tmp");
	if (!path || !tmp) {
		ret = -ENOMEM;
		goto out;
	}
	ret = json_dump_file(t->vm, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
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
	json_t *a = json_pack("{s:i, s:s}", "pid", cfg->attach_pid, "via",
			      cfg->attach_via ? cfg->attach_via : "pid");

	if (!a)
		return -EINVAL;
	if (cfg->attach_domain &&
	    json_object_set_new(a, "domain", json_string(cfg->attach_domain))) {
		json_decref(a);
		return -EINVAL; /* not UTF-8 */
	}
	return json_object_set_new(o, "attached", a) ? -EINVAL : 0;
}

static int write_vm_json(struct trace *t, const struct trace_config *cfg, uint64_t start_ns)
{
	char id[17];
	json_t *o;

	snprintf(id, sizeof(id), "%016" PRIx64, t->vm_id);
	o = json_pack("{s:i, s:s, s:s?, s:o, s:i, s:i, s:s, s:s, s:I, s:I}",
		      "version", 1,
		      "vm_id", id,
		      cfg->linux_kernel ? "kernel" : "image", cfg->image,
		      "build_id", cfg->build_id && cfg->build_id[0] ?
				json_string(cfg->build_id) : json_null(),
		      "vcpus", (int)cfg->vcpus,
		      "memory_mib", (int)cfg->memory_mib,
		      "backend", cfg->backend,
		      "cpl", trace__cpl_name(cfg->cpl),
		      "ring_records", (json_int_t)cfg->ring_records,
		      "start_time_ns", (json_int_t)start_ns);
	if (!o)
		return -EINVAL; /* e.g. an image path that is not UTF-8 */
	if (cfg->system_map &&
	    json_object_set_new(o, "system_map", json_string(cfg->system_map))) {
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
	if (json_object_set_new(t->vm, "kaslr_slide", json_integer((json_int_t)slide)))
		return -ENOMEM;
	return save_vm_json(t);
}

static void remove_all(struct trace *t)
{
	char name[32];

	for (unsigned int i = 0; i < t->nr_rings; i++) {
		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		remove_in(t, name);
	}
	remove_in(t, "events.jsonl");
	remove_in(t, "vm.json");
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

	ret = trace__check_budget(cfg->ring_records, cfg->vcpus, trace__host_available_memory(),
				  err, errlen);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dir = strdup(cfg->dir);
	t->rings = calloc(cfg->vcpus ? cfg->vcpus : 1, sizeof(*t->rings));
	if (!t->dir || !t->rings) {
		ret = -ENOMEM;
		set_err(err, errlen, "out of memory");
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
		set_err(err, errlen, "cannot create trace directory %s: %s", cfg->dir,
			strerror(errno));
		goto err_free;
	}
	test_hook__stop_at("trace-dir");
	if (getrandom(&t->vm_id, sizeof(t->vm_id), 0) != sizeof(t->vm_id))
		t->vm_id = realtime_ns() ^ ((uint64_t)getpid() << 32);
	start_ns = realtime_ns();
	ret = write_vm_json(t, cfg, start_ns);
	if (ret < 0) {
		set_err(err, errlen, "cannot write %s/vm.json: %s", cfg->dir, strerror(-ret));
		goto err_remove;
	}
	test_hook__stop_at("vm.json");
	rc.capacity = cfg->ring_records;
	rc.mode = VBTS_RING_WRAP;
	rc.vm_id = t->vm_id;
	rc.start_time_ns = start_ns;
	for (unsigned int i = 0; i < cfg->vcpus; i++) {
		char name[32];

		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		path = path_in(t, name);
		if (!path) {
			ret = -ENOMEM;
			set_err(err, errlen, "out of memory");
			goto err_remove;
		}
		rc.vcpu_id = i;
		t->rings[i] = ring_writer__create(path, &rc);
		if (!t->rings[i]) {
			ret = -errno;
			set_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
			free(path);
			goto err_remove;
		}
		free(path);
		t->nr_rings = i + 1;
		test_hook__stop_at(name);
	}
	path = path_in(t, "events.jsonl");
	if (!path) {
		ret = -ENOMEM;
		set_err(err, errlen, "out of memory");
		goto err_remove;
	}
	t->events = fopen(path, "wxe");
	if (!t->events) {
		ret = -errno;
		set_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
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
