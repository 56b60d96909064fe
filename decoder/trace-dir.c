// SPDX-License-Identifier: GPL-2.0
/*
 * trace-dir.c - open a vbts trace directory: vm.json, rings, events.jsonl, symbols.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "trace-dir.h"

/* A sane bound on vCPUs; KVM's own limit is lower. */
#define TRACE_MAX_VCPUS 4096
/* Escaped text quoted from the trace (names, jansson's "near '...'") in one message. */
#define QUOTE_MAX 256

struct ring_source {
	struct ring_reader *ring;
};

struct trace_dir {
	char *dir;
	unsigned int nr_vcpus;
	struct ring_reader **rings;
	struct ring_source *srcs;
	struct procmap *procmap;
	struct symbols *symbols;
	struct trace_dir_options opts;
};

static void __attribute__((format(printf, 2, 3))) warn(const struct trace_dir *t,
						       const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!t->opts.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	t->opts.warn(t->opts.warn_ctx, line);
}

static char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* ---- decoder source over a ring reader ---------------------------------------------------- */

static ssize_t ring_source_read(void *ctx, struct vbts_record *buf, size_t max,
				uint64_t *first_seq)
{
	struct ring_source *s = ctx;

	return ring_reader__read(s->ring, buf, max, first_seq);
}

/*
 * Records lost after the last one returned: the end of the window when the writer overwrote
 * it while it was being read (live ring), and for a frozen ring the appends it refused - only
 * a frozen ring has a final committed value, so only there is lost - overwritten exactly that.
 */
static uint64_t ring_source_dropped(void *ctx, uint64_t end_seq)
{
	struct ring_source *s = ctx;
	const struct vbts_ring_header *h = ring_reader__header(s->ring);
	uint64_t first, end, lost, dropped;

	ring_reader__window(s->ring, &first, &end);
	dropped = end > end_seq ? end - end_seq : 0;
	if (h->flags & VBTS_RING_F_FROZEN) {
		lost = ring_reader__lost(s->ring);
		dropped += lost > first ? lost - first : 0;
	}
	return dropped;
}

static const struct decoder_source_ops ring_source_ops = {
	.read = ring_source_read,
	.dropped = ring_source_dropped,
};

/* ---- vm.json ------------------------------------------------------------------------------ */

static int parse_hex_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 16);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int open_rings(struct trace_dir *t, json_t *vm, const char *vm_path, char *err,
		      size_t errlen)
{
	json_t *v = json_object_get(vm, "vcpus");
	uint64_t vm_id = 0;
	bool have_vm_id = false;
	unsigned int i, n;
	char name[32];
	char *path;

	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > TRACE_MAX_VCPUS) {
			snprintf(err, errlen, "%s: \"vcpus\" must be an integer from 1 to %d",
				 vm_path, TRACE_MAX_VCPUS);
			return -EINVAL;
		}
		n = (unsigned int)json_integer_value(v);
	} else {
		for (n = 0; n < TRACE_MAX_VCPUS; n++) {
			snprintf(name, sizeof(name), "vcpu%u.ring", n);
			path = path_join(t->dir, name);
			if (!path)
				return -ENOMEM;
			if (!file_exists(path)) {
				free(path);
				break;
			}
			free(path);
		}
		if (!n) {
			snprintf(err, errlen, "%s: no vcpu0.ring", t->dir);
			return -ENOENT;
		}
	}
	v = json_object_get(vm, "vm_id");
	if (json_is_string(v) && !parse_hex_u64(json_string_value(v), &vm_id))
		have_vm_id = true;
	else if (json_is_integer(v))
		vm_id = (uint64_t)json_integer_value(v), have_vm_id = true;

	t->rings = calloc(n, sizeof(*t->rings));
	t->srcs = calloc(n, sizeof(*t->srcs));
	if (!t->rings || !t->srcs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct vbts_ring_header *h;

		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		path = path_join(t->dir, name);
		if (!path)
			return -ENOMEM;
		t->rings[i] = ring_reader__open(path, err, errlen);
		free(path);
		if (!t->rings[i])
			return -errno;
		t->nr_vcpus = i + 1;
		t->srcs[i].ring = t->rings[i];
		h = ring_reader__header(t->rings[i]);
		if (have_vm_id && h->vm_id != vm_id)
			warn(t, "%s/%s: vm_id 0x%" PRIx64 " differs from vm.json's 0x%" PRIx64
				", the files come from different runs", t->dir, name, h->vm_id,
			     vm_id);
	}
	return 0;
}

/* Symbols: --image, else vm.json's image, else symbols/<build-id>/ in the trace directory. */
static void load_symbols(struct trace_dir *t, json_t *vm)
{
	const char *image = t->opts.image, *want_id, *have_id;
	static const char *const cached[] = { "executable", "debuginfo", "elf" };
	char image_q[QUOTE_MAX], id_q[QUOTE_MAX];
	char *alt = NULL;
	size_t i;

	want_id = json_string_value(json_object_get(vm, "build_id"));
	if (!image)
		image = json_string_value(json_object_get(vm, "image"));
	if (image && !file_exists(image) && image[0] != '/') {
		alt = path_join(t->dir, image);
		if (alt && file_exists(alt))
			image = alt;
	}
	if ((!image || !file_exists(image)) && want_id) {
		for (i = 0; i < sizeof(cached) / sizeof(cached[0]); i++) {
			free(alt);
			if (asprintf(&alt, "%s/symbols/%s/%s", t->dir, want_id, cached[i]) < 0) {
				alt = NULL;
				break;
			}
			if (file_exists(alt)) {
				image = alt;
				break;
			}
		}
	}
	if (!image) {
		warn(t, "%s: no guest image named, no symbols", t->dir);
		goto out;
	}
	/* vm.json's names are quoted escaped: the trace directory may come from anywhere. */
	escape__str(image_q, sizeof(image_q), image);
	t->symbols = symbols__load(image);
	if (!t->symbols) {
		warn(t, "%s: %s, no symbols", image_q, strerror(errno));
		goto out;
	}
	have_id = symbols__build_id(t->symbols);
	if (!t->opts.image && want_id && *want_id && have_id && strcasecmp(want_id, have_id)) {
		warn(t, "%s: build ID %s differs from the traced image's %s, no symbols", image_q,
		     have_id, escape__str(id_q, sizeof(id_q), want_id));
		symbols__free(t->symbols);
		t->symbols = NULL;
		goto out;
	}
	if (symbols__dwarf_problem(t->symbols))
		warn(t, "%s: %s, no source lines", image_q, symbols__dwarf_problem(t->symbols));
out:
	free(alt);
}

static int load_events(struct trace_dir *t)
{
	uint64_t bad, first;
	char *path;
	int ret;

	t->procmap = procmap__new();
	if (!t->procmap)
		return -ENOMEM;
	path = path_join(t->dir, "events.jsonl");
	if (!path)
		return -ENOMEM;
	ret = procmap__load(t->procmap, path);
	if (ret == -ENOMEM) {
		free(path);
		return ret;
	}
	if (ret && ret != -ENOENT)
		warn(t, "%s: %s, no task names", path, strerror(-ret));
	bad = procmap__bad_lines(t->procmap, &first);
	if (bad)
		warn(t, "%s: %" PRIu64 " unusable line%s ignored (the first is line %" PRIu64 ")",
		     path, bad, bad == 1 ? "" : "s", first);
	free(path);
	return 0;
}

struct trace_dir *trace_dir__open(const char *dir, const struct trace_dir_options *opts,
				  char *err, size_t errlen)
{
	struct trace_dir *t;
	json_error_t jerr;
	struct stat st;
	char *vm_path = NULL;
	json_t *vm = NULL;
	int ret;

	err[0] = '\0';
	if (stat(dir, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		goto err_out;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		snprintf(err, errlen, "%s: not a trace directory", dir);
		goto err_out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		goto err_out;
	}
	if (opts)
		t->opts = *opts;
	t->dir = strdup(dir);
	vm_path = path_join(dir, "vm.json");
	if (!t->dir || !vm_path) {
		ret = -ENOMEM;
		goto err_close;
	}
	if (!file_exists(vm_path)) {
		ret = -ENOENT;
		snprintf(err, errlen, "%s: no vm.json, not a vbts trace directory", dir);
		goto err_close;
	}
	vm = json_load_file(vm_path, JSON_REJECT_DUPLICATES, &jerr);
	if (!vm) {
		char text[QUOTE_MAX];

		ret = -EINVAL;
		/* jansson's text quotes the file's bytes ("near '...'"). */
		snprintf(err, errlen, "%s: line %d: %s", vm_path, jerr.line,
			 escape__str(text, sizeof(text), jerr.text));
		goto err_close;
	}
	if (!json_is_object(vm)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a JSON object", vm_path);
		goto err_close;
	}
	ret = open_rings(t, vm, vm_path, err, errlen);
	if (ret)
		goto err_close;
	ret = load_events(t);
	if (ret)
		goto err_close;
	if (!t->opts.no_symbols)
		load_symbols(t, vm);
	json_decref(vm);
	free(vm_path);
	return t;

err_close:
	json_decref(vm);
	free(vm_path);
	trace_dir__close(t);
err_out:
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: out of memory", dir);
	errno = -ret;
	return NULL;
}

unsigned int trace_dir__nr_vcpus(const struct trace_dir *t)
{
	return t->nr_vcpus;
}

struct ring_reader *trace_dir__ring(const struct trace_dir *t, unsigned int i)
{
	return t->rings[i];
}

struct decoder *trace_dir__decoder(struct trace_dir *t, int vcpu)
{
	struct decoder_source *src;
	struct decoder *d;
	unsigned int i, n = 0;

	src = calloc(t->nr_vcpus, sizeof(*src));
	if (!src)
		return NULL;
	for (i = 0; i < t->nr_vcpus; i++) {
		const struct vbts_ring_header *h = ring_reader__header(t->rings[i]);

		if (vcpu >= 0 && h->vcpu_id != (uint32_t)vcpu)
			continue;
		if (ring_reader__begin(t->rings[i])) {
			free(src);
			errno = EIO;
			return NULL;
		}
		src[n].vcpu = h->vcpu_id;
		src[n].first_seq = 0;
		src[n].ops = &ring_source_ops;
		src[n].ctx = &t->srcs[i];
		n++;
	}
	if (!n) {
		free(src);
		errno = ENOENT;
		return NULL;
	}
	d = decoder__new(src, n);
	free(src);
	return d;
}

const struct procmap *trace_dir__procmap(const struct trace_dir *t)
{
	return t->procmap;
}

const struct symbols *trace_dir__symbols(const struct trace_dir *t)
{
	return t->symbols;
}

void trace_dir__close(struct trace_dir *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nr_vcpus; i++)
		ring_reader__close(t->rings[i]);
	free(t->rings);
	free(t->srcs);
	procmap__free(t->procmap);
	symbols__free(t->symbols);
	free(t->dir);
	free(t);
}
