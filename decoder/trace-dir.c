// SPDX-License-Identifier: GPL-2.0
/*
 * trace-dir.c - open a vbts trace directory: vm.json, rings, events.jsonl, symbols (the
 * multiboot image; the Linux kernel's System.map and vmlinux, the tasks' programs).
 */
#include <dirent.h>
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
#include "events.h"
#include "input-file.h"
#include "seg-reader.h"
#include "trace-dir.h"
#include "trace-keys.h"

/* A sane bound on vCPUs; KVM's own limit is lower. */
#define TRACE_MAX_VCPUS 4096
/* Escaped text quoted from the trace (names, jansson's "near '...'") in one message. */
#define QUOTE_MAX 256

/* One vCPU's records: a ring file (wrap mode) or its segments (stream mode). */
struct ring_source {
	struct ring_reader *ring;
	struct seg_reader *seg;
	uint32_t vcpu_id;
};

struct trace_dir {
	char *dir;
	unsigned int nr_vcpus;
	struct ring_reader **rings;
	struct ring_source *srcs;
	struct procmap *procmap;
	struct symbols *symbols;        /* the image, owned by @symbolizer */
	struct symbolizer *symbolizer;
	struct symbol_files *files;     /* --symbols, bound to the tasks by @symbolizer */
	struct trace_dir_options opts;
	unsigned int warnings;          /* lines passed to opts.warn */
	unsigned int warnings_dropped;  /* lines past TRACE_DIR_WARN_MAX */
	unsigned int damaged;           /* problems that left part of the trace unread */
	uint64_t kaslr_slide;           /* the guest kernel's, when @kaslr_slide_known */
	bool kaslr_slide_known;
};

static void vwarn(struct trace_dir *t, const char *fmt, va_list ap)
{
	char line[TRACE_DIR_ERR_MAX];

	if (t->warnings >= TRACE_DIR_WARN_MAX) {
		t->warnings_dropped++;
		return;
	}
	t->warnings++;
	if (!t->opts.warn)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	t->opts.warn(t->opts.warn_ctx, line);
}

/* A problem that does not stop decoding and loses nothing of the trace. */
static void __attribute__((format(printf, 2, 3))) warn(struct trace_dir *t, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(t, fmt, ap);
	va_end(ap);
}

/* A part of the trace that cannot be read: reported, the rest is decoded. */
static void __attribute__((format(printf, 2, 3))) damage(struct trace_dir *t, const char *fmt,
							 ...)
{
	va_list ap;

	t->damaged++;
	va_start(ap, fmt);
	vwarn(t, fmt, ap);
	va_end(ap);
}

/* A warning line from another module. */
static void warn_line(void *ctx, const char *line)
{
	warn(ctx, "%s", line);
}

/* The count of the warnings that were not shown, in one last line. */
static void flush_warnings(struct trace_dir *t)
{
	char line[TRACE_DIR_ERR_MAX];

	if (!t->warnings_dropped || !t->opts.warn)
		return;
	snprintf(line, sizeof(line), "%s: %u more problem%s not shown", t->dir,
		 t->warnings_dropped, t->warnings_dropped == 1 ? "" : "s");
	t->opts.warn(t->opts.warn_ctx, line);
	t->warnings_dropped = 0;
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

/* ---- decoder source over a vCPU's stream segments ----------------------------------------- */

static ssize_t seg_source_read(void *ctx, struct vbts_record *buf, size_t max,
			       uint64_t *first_seq)
{
	struct ring_source *s = ctx;

	return seg_reader__read(s->seg, buf, max, first_seq);
}

/* The records of the window not read (a damaged last segment), and a frozen vCPU's refusals. */
static uint64_t seg_source_dropped(void *ctx, uint64_t end_seq)
{
	struct ring_source *s = ctx;
	uint64_t first, end;

	seg_reader__window(s->seg, &first, &end);
	return (end > end_seq ? end - end_seq : 0) + seg_reader__dropped_at_end(s->seg);
}

static const struct decoder_source_ops seg_source_ops = {
	.read = seg_source_read,
	.dropped = seg_source_dropped,
};

static void seg_warn(void *ctx, const char *line)
{
	damage(ctx, "%s", line);
}

/* Opens vCPU @i's segments as source t->srcs[t->nr_vcpus]: 0, or -errno with @err set. */
static int open_segments(struct trace_dir *t, unsigned int i, bool have_vm_id, uint64_t vm_id,
			 char *err, size_t errlen)
{
	struct seg_reader *r = seg_reader__open(t->dir, i, seg_warn, t, err, errlen);

	if (!r)
		return -errno;
	/* every segment must be this run's: another's is damage, said when it is read */
	if (have_vm_id && seg_reader__set_vm_id(r, vm_id)) {
		snprintf(err, errlen,
			 "%s: no segment of vCPU %u is of this run (vm.json's vm_id 0x%" PRIx64 ")",
			 t->dir, i, vm_id);
		seg_reader__close(r);
		return -EINVAL;
	}
	t->rings[t->nr_vcpus] = NULL;
	t->srcs[t->nr_vcpus].seg = r;
	t->srcs[t->nr_vcpus].vcpu_id = i;
	t->nr_vcpus++;
	return 0;
}

/* The vCPU of a ring or segment file's name ("vcpuN.ring", "vcpuN.open.vseg",
 * "vcpuN.SSSSSSSS.vseg"), or -1 for any other name. */
static int64_t vcpu_file(const char *name)
{
	const char *p = name + 4;
	int64_t v = 0;
	size_t i;

	if (strncmp(name, "vcpu", 4) || *p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > TRACE_MAX_VCPUS * 10LL)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (!strcmp(p, ".ring") || !strcmp(p, VBTS_SEG_OPEN_SUFFIX))
		return v;
	if (*p++ != '.')
		return -1;
	for (i = 0; i < 8; i++)
		if (p[i] < '0' || p[i] > '9')
			return -1;
	return strcmp(p + 8, VBTS_SEG_SUFFIX) ? -1 : v;
}

/* Ring and segment files of vCPUs the trace does not have (@n of them): said, not read. */
static void extra_vcpu_files(struct trace_dir *t, unsigned int n)
{
	char first[NAME_MAX + 1] = "";
	unsigned int count = 0;
	struct dirent *de;
	DIR *d = opendir(t->dir);
	int64_t v;

	if (!d)
		return;
	while ((de = readdir(d))) {
		v = vcpu_file(de->d_name);
		if (v < (int64_t)n)
			continue;
		/* the name is "vcpu", digits and a known suffix: nothing to escape */
		if (!count++ || strcmp(de->d_name, first) < 0)
			snprintf(first, sizeof(first), "%s", de->d_name);
	}
	closedir(d);
	if (count)
		damage(t, "%s: %u file%s of vCPUs the trace does not have (it has vCPUs 0 to %u), "
		       "not read: %s%s", t->dir, count, count == 1 ? "" : "s", n - 1, first,
		       count == 1 ? "" : " and others");
}

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
	json_t *v = json_object_get(vm, VM_KEY_VCPUS);
	char ring_err[RING_READER_ERR_MAX], first_err[RING_READER_ERR_MAX];
	unsigned int i, n, failed = 0;
	uint64_t vm_id = 0;
	bool have_vm_id = false, stream;
	int first_errno = 0;
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
			if (!file_exists(path) && !seg_reader__exists(t->dir, n)) {
				free(path);
				break;
			}
			free(path);
		}
		if (!n) {
			snprintf(err, errlen, "%s: no vcpu0.ring and no vcpu0 segment", t->dir);
			return -ENOENT;
		}
	}
	v = json_object_get(vm, VM_KEY_VM_ID);
	if (json_is_string(v) && !parse_hex_u64(json_string_value(v), &vm_id))
		have_vm_id = true;
	else if (json_is_integer(v) && json_integer_value(v) >= 0)
		vm_id = (uint64_t)json_integer_value(v), have_vm_id = true;
	else if (v)
		damage(t, "%s: \"vm_id\" is not a run id (hex digits); the files' runs are not "
		       "checked", vm_path);
	v = json_object_get(vm, VM_KEY_MODE);
	stream = json_is_string(v) && !strcmp(json_string_value(v), VM_MODE_STREAM);
	if (v && !stream && !(json_is_string(v) && !strcmp(json_string_value(v), "wrap"))) {
		char q[QUOTE_MAX];

		damage(t, "%s: \"mode\" %s is neither \"wrap\" nor \"stream\"; each vCPU read as "
		       "its files are", vm_path, json_is_string(v) ?
		       escape__str(q, sizeof(q), json_string_value(v)) : "(not a string)");
	}

	t->rings = calloc(n, sizeof(*t->rings));
	t->srcs = calloc(n, sizeof(*t->srcs));
	if (!t->rings || !t->srcs)
		return -ENOMEM;
	extra_vcpu_files(t, n);
	/*
	 * A ring that cannot be read is skipped with a warning and the others are decoded. The
	 * first failure waits: if it is the only ring of the trace, it is the error instead.
	 */
	for (i = 0; i < n; i++) {
		const struct vbts_ring_header *h;
		struct ring_reader *r;

		snprintf(name, sizeof(name), "vcpu%u.ring", i);
		path = path_join(t->dir, name);
		if (!path)
			return -ENOMEM;
		if (stream || (!file_exists(path) && seg_reader__exists(t->dir, i))) {
			int ret;

			free(path);
			ret = open_segments(t, i, have_vm_id, vm_id, ring_err, sizeof(ring_err));
			if (ret == -ENOMEM)
				return ret;
			if (ret && !failed++) {
				first_errno = -ret;
				snprintf(first_err, sizeof(first_err), "%s", ring_err);
			} else if (ret) {
				if (failed == 2)
					damage(t, "%s; vCPU skipped", first_err);
				damage(t, "%s; vCPU skipped", ring_err);
			}
			continue;
		}
		r = ring_reader__open(path, ring_err, sizeof(ring_err));
		free(path);
		if (!r) {
			if (!failed++) {
				first_errno = errno;
				snprintf(first_err, sizeof(first_err), "%s", ring_err);
				continue;
			}
			if (failed == 2)
				damage(t, "%s; ring skipped", first_err);
			damage(t, "%s; ring skipped", ring_err);
			continue;
		}
		t->rings[t->nr_vcpus] = r;
		t->srcs[t->nr_vcpus].ring = r;
		t->srcs[t->nr_vcpus].vcpu_id = ring_reader__header(r)->vcpu_id;
		t->nr_vcpus++;
		h = ring_reader__header(r);
		if (have_vm_id && h->vm_id != vm_id)
			warn(t, "%s/%s: vm_id 0x%" PRIx64 " differs from vm.json's 0x%" PRIx64
				", the files come from different runs", t->dir, name, h->vm_id,
			     vm_id);
	}
	if (!t->nr_vcpus && failed == 1) {
		snprintf(err, errlen, "%s", first_err);
		return -first_errno;
	}
	if (!t->nr_vcpus) {
		snprintf(err, errlen, "%s: none of the %u ring files is readable", t->dir, n);
		return -EINVAL;
	}
	if (failed == 1)
		damage(t, "%s; ring skipped", first_err);
	return 0;
}

/*
 * A path vm.json names: as it is, or, when it is relative and does not exist, inside the
 * trace directory (a trace copied with its files). *@alt receives what to free.
 */
static const char *resolve_path(struct trace_dir *t, const char *name, char **alt)
{
	*alt = NULL;
	if (!name || file_exists(name) || name[0] == '/')
		return name;
	*alt = path_join(t->dir, name);
	if (*alt && file_exists(*alt))
		return *alt;
	return name;
}

/* Symbols: --image, else vm.json's image, else symbols/<build-id>/ in the trace directory. */
static void load_image(struct trace_dir *t, json_t *vm)
{
	const char *image = t->opts.image, *want_id, *have_id;
	static const char *const cached[] = { "executable", "debuginfo", "elf" };
	char err[TRACE_DIR_ERR_MAX];
	char image_q[QUOTE_MAX], id_q[QUOTE_MAX];
	struct symbols *symbols;
	char *alt = NULL;
	size_t i;
	int fd;

	want_id = json_string_value(json_object_get(vm, VM_KEY_BUILD_ID));
	if (want_id && *want_id && !symbols__build_id_valid(want_id)) {
		damage(t, "%s/vm.json: build_id is not a hex build ID; ignored", t->dir);
		want_id = NULL;
	}
	if (!image)
		image = json_string_value(json_object_get(vm, VM_KEY_IMAGE));
	image = resolve_path(t, image, &alt);
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
	fd = input_file__open(image, SYMBOLS_FILE_MAX, NULL, err, sizeof(err));
	if (fd < 0) {
		char err_q[TRACE_DIR_ERR_MAX];

		escape__str(err_q, sizeof(err_q), err);
		/* Missing is common (a trace moved to another host); a FIFO or /dev/zero is not. */
		if (fd == -EINVAL || fd == -EFBIG)
			damage(t, "%s, no symbols", err_q);
		else
			warn(t, "%s, no symbols", err_q);
		goto out;
	}
	symbols = symbols__load_fd(fd);
	if (symbols && symbols__set_path(symbols, image)) {
		symbols__free(symbols);
		symbols = NULL;
		errno = ENOMEM;
	}
	if (!symbols) {
		warn(t, "%s: %s, no symbols", image_q, strerror(errno));
		goto out;
	}
	have_id = symbols__build_id(symbols);
	if (!t->opts.image && want_id && *want_id && have_id && strcasecmp(want_id, have_id)) {
		warn(t, "%s: build ID %s differs from the traced image's %s, no symbols", image_q,
		     have_id, escape__str(id_q, sizeof(id_q), want_id));
		symbols__free(symbols);
		goto out;
	}
	if (symbols__dwarf_problem(symbols))
		warn(t, "%s: %s, no source lines", image_q, symbols__dwarf_problem(symbols));
	t->symbols = symbols;
	symbolizer__set_image(t->symbolizer, symbols);
out:
	free(alt);
}

/*
 * A kernel file that cannot be opened: missing is common when vm.json names it (a trace on
 * another host), a problem when an option names it; a FIFO, a device or a huge file always is.
 */
static void kernel_file_problem(struct trace_dir *t, int ret, const char *err, bool named)
{
	char err_q[TRACE_DIR_ERR_MAX];

	escape__str(err_q, sizeof(err_q), err);
	if (named || ret == -EINVAL || ret == -EFBIG)
		damage(t, "%s, kernel addresses not symbolized from it", err_q);
	else
		warn(t, "%s, kernel addresses not symbolized from it", err_q);
}

/* The guest kernel's System.map; NULL when there is none or it has no text symbol. */
static struct symbols *load_system_map(struct trace_dir *t, const char *path, bool named)
{
	char err[TRACE_DIR_ERR_MAX], q[QUOTE_MAX];
	struct system_map_stats st;
	struct symbols *s;

	s = symbols__load_system_map(path, &st, err, sizeof(err));
	if (!s) {
		if (errno != ENOMEM)
			kernel_file_problem(t, -errno, err, named);
		return NULL;
	}
	escape__str(q, sizeof(q), path);
	if (st.cut)
		damage(t, "%s: larger than %llu bytes, the lines after line %" PRIu64
			  " are not read", q, SYSTEM_MAP_FILE_MAX, st.lines);
	if (st.placeholder) {
		warn(t, "%s: the placeholder of Debian's linux-image package, no symbols (the "
			"System.map is in its -dbg package), kernel addresses not symbolized "
			"from it", q);
	} else {
		if (st.malformed)
			warn(t, "%s: %" PRIu64 " malformed line%s ignored (the first is line %"
				PRIu64 ")", q, st.malformed, st.malformed == 1 ? "" : "s",
			     st.first_malformed);
		if (!symbols__count(s))
			warn(t, "%s: no text symbols, kernel addresses not symbolized from it", q);
	}
	if (!symbols__count(s)) {
		symbols__free(s);
		return NULL;
	}
	return s;
}

/* The guest kernel's ELF file with symbols; NULL when there is none or it has no symbol. */
static struct symbols *load_vmlinux(struct trace_dir *t, const char *path)
{
	char err[TRACE_DIR_ERR_MAX], q[QUOTE_MAX];
	struct symbols *s;
	int fd;

	fd = input_file__open(path, SYMBOLS_FILE_MAX, NULL, err, sizeof(err));
	if (fd < 0) {
		kernel_file_problem(t, fd, err, false);
		return NULL;
	}
	escape__str(q, sizeof(q), path);
	s = symbols__load_fd(fd);
	if (s && symbols__set_path(s, path)) {
		symbols__free(s);
		s = NULL;
		errno = ENOMEM;
	}
	if (!s) {
		warn(t, "%s: %s, kernel addresses not symbolized from it", q, strerror(errno));
		return NULL;
	}
	if (!symbols__count(s)) {
		warn(t, "%s: no symbol table, kernel addresses not symbolized from it", q);
		symbols__free(s);
		return NULL;
	}
	if (symbols__dwarf_problem(s))
		warn(t, "%s: %s, no source lines", q, symbols__dwarf_problem(s));
	return s;
}

/*
 * The guest kernel's tables, for a Linux guest (vm.json names a kernel) or when --system-map
 * names one: System.map (--system-map, else TRACE_DIR_KALLSYMS, else vm.json's) and vmlinux,
 * shifted by the KASLR slide, which must be known.
 */
static void load_kernel(struct trace_dir *t, json_t *vm, bool linux_guest)
{
	const char *map = t->opts.system_map, *vmlinux;
	struct symbols *map_s = NULL, *vmlinux_s = NULL;
	char *map_alt = NULL, *vmlinux_alt = NULL;
	json_t *slide = json_object_get(vm, VM_KEY_KASLR_SLIDE);
	bool slide_known = t->opts.kaslr_slide_set;

	/* The running kernel's own symbols, which vbts run saved (TRACE_DIR_KALLSYMS). */
	if (!map && linux_guest) {
		map_alt = path_join(t->dir, TRACE_DIR_KALLSYMS);
		if (map_alt && file_exists(map_alt))
			map = map_alt;
	}
	if (!map && linux_guest) {
		free(map_alt);
		map = resolve_path(t, json_string_value(json_object_get(vm, VM_KEY_SYSTEM_MAP)),
				   &map_alt);
	}
	vmlinux = !linux_guest ? NULL :
		  resolve_path(t, json_string_value(json_object_get(vm, VM_KEY_VMLINUX)),
			       &vmlinux_alt);
	if (t->opts.kaslr_slide_set || json_is_integer(slide)) {
		t->kaslr_slide_known = true;
		t->kaslr_slide = t->opts.kaslr_slide_set ? (uint64_t)t->opts.kaslr_slide :
			       (uint64_t)json_integer_value(slide);
	}
	if (!map && !vmlinux) {
		if (linux_guest)
			warn(t, "%s: vm.json names no System.map or vmlinux of the guest kernel, "
				"kernel addresses not symbolized", t->dir);
		return;
	}
	if (slide && !json_is_integer(slide)) {
		damage(t, "%s/vm.json: kaslr_slide is not an integer; ignored", t->dir);
		slide = NULL;
	}
	slide_known = slide_known || slide;
	if (map)
		map_s = load_system_map(t, map, t->opts.system_map != NULL);
	if (vmlinux)
		vmlinux_s = load_vmlinux(t, vmlinux);
	if ((map_s || vmlinux_s) && !slide_known) {
		warn(t, "%s: the guest kernel's KASLR slide is unknown (no kaslr_slide in "
			"vm.json), kernel addresses not symbolized; --kaslr-slide gives it",
		     t->dir);
		symbols__free(map_s);
		symbols__free(vmlinux_s);
		map_s = vmlinux_s = NULL;
	}
	if (map_s || vmlinux_s)
		symbolizer__set_kernel(t->symbolizer, vmlinux_s, map_s,
				       t->opts.kaslr_slide_set ? (uint64_t)t->opts.kaslr_slide :
				       (uint64_t)json_integer_value(slide));
	free(map_alt);
	free(vmlinux_alt);
}

/* The ELF files of --symbols, bound to the tasks of the process map. */
static int load_symbol_files(struct trace_dir *t)
{
	char err[TRACE_DIR_ERR_MAX];
	size_t i;
	int ret;

	if (!t->opts.nr_symbol_paths)
		return 0;
	t->files = symbol_files__new(warn_line, t);
	if (!t->files)
		return -ENOMEM;
	for (i = 0; i < t->opts.nr_symbol_paths; i++) {
		ret = symbol_files__add(t->files, t->opts.symbol_paths[i], err, sizeof(err));
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			damage(t, "--symbols %s, not searched", err);
	}
	return symbolizer__bind(t->symbolizer, t->files, t->procmap, warn_line, t);
}

/*
 * Every source of symbols. A trace whose vm.json names a kernel and no image is a Linux
 * guest's: no image is looked for, the kernel's tables are.
 */
/*
 * The guest agent's mappings (events.jsonl) and the ELF files of the build-ID store
 * (DIR/debuginfod): a Linux guest's PIEs and libraries at their load addresses.
 */
static int load_guest_maps(struct trace_dir *t)
{
	char *events = path_join(t->dir, EVENTS_FILE), *store = path_join(t->dir, "debuginfod");
	struct guest_maps *gm = NULL;
	uint64_t bad;
	int ret = -ENOMEM;

	if (!events || !store)
		goto out;
	gm = guest_maps__new(store, warn_line, t);
	if (!gm)
		goto out;
	ret = guest_maps__load(gm, events);
	if (ret == -ENOMEM)
		goto out;
	/* events.jsonl's own problems are load_events()'s to report. */
	ret = 0;
	bad = guest_maps__bad(gm);
	if (bad)
		warn(t, "%s: %" PRIu64 " agent-map event%s not used (bad members, or more than %d)",
		     events, bad, bad == 1 ? "" : "s", GUEST_MAPS_MAX);
	if (!guest_maps__nr(gm))
		goto out;
	ret = symbolizer__set_guest_maps(t->symbolizer, gm, t->procmap);
	gm = NULL;
out:
	guest_maps__free(gm);
	free(events);
	free(store);
	return ret;
}

static int load_symbols(struct trace_dir *t, json_t *vm)
{
	bool linux_guest = json_object_get(vm, VM_KEY_KERNEL) && !json_object_get(vm, VM_KEY_IMAGE);
	int ret;

	t->symbolizer = symbolizer__new();
	if (!t->symbolizer)
		return -ENOMEM;
	if (t->opts.image || !linux_guest)
		load_image(t, vm);
	load_kernel(t, vm, linux_guest);
	ret = load_symbol_files(t);
	if (ret)
		return ret;
	return linux_guest ? load_guest_maps(t) : 0;
}

/* What load_events() says about events.jsonl besides its events. */
struct events_load {
	struct trace_dir *t;
	const char *path;
	uint64_t long_lines, first_long;
	bool cut;
};

static int load_event(void *ctx, const char *name, json_t *obj, uint64_t lineno)
{
	struct events_load *l = ctx;

	return procmap__add_event(l->t->procmap, name, obj, lineno);
}

static void load_too_long(void *ctx, uint64_t lineno)
{
	struct events_load *l = ctx;

	if (!l->long_lines++)
		l->first_long = lineno;
}

static void load_cut(void *ctx, int err, uint64_t lineno)
{
	struct events_load *l = ctx;

	l->cut = true;
	if (err == -EFBIG)
		damage(l->t, "%s: larger than %llu bytes, the lines after line %" PRIu64
			     " are not read", l->path, EVENTS_FILE_MAX, lineno);
	else
		damage(l->t, "%s: read error after line %" PRIu64 ": %s, the rest is not read",
		       l->path, lineno, strerror(-err));
}

static int load_events(struct trace_dir *t)
{
	static const struct events_ops ops = {
		.event = load_event,
		.too_long = load_too_long,
		.cut = load_cut,
	};
	struct events_load l = { .t = t };
	char err[TRACE_DIR_ERR_MAX];
	uint64_t bad, first;
	char *path;
	int ret;

	t->procmap = procmap__new();
	if (!t->procmap)
		return -ENOMEM;
	path = path_join(t->dir, EVENTS_FILE);
	if (!path)
		return -ENOMEM;
	l.path = path;
	ret = events__load(path, &ops, &l, err, sizeof(err));
	if (ret == -ENOMEM)
		goto out;
	if (ret && !l.cut) {
		/* No events.jsonl: a trace without task names, nothing is wrong. */
		if (ret != -ENOENT)
			damage(t, "%s, no task names", err);
		ret = 0;
		goto out;
	}
	ret = 0;
	if (l.long_lines)
		warn(t, "%s: %" PRIu64 " line%s longer than %d bytes ignored (the first is line %"
			PRIu64 ")", path, l.long_lines, l.long_lines == 1 ? "" : "s",
		     EVENTS_LINE_MAX, l.first_long);
	bad = procmap__bad_lines(t->procmap, &first);
	if (bad)
		warn(t, "%s: %" PRIu64 " unusable line%s ignored (the first is line %" PRIu64 ")",
		     path, bad, bad == 1 ? "" : "s", first);
out:
	free(path);
	return ret;
}

struct trace_dir *trace_dir__open(const char *dir, const struct trace_dir_options *opts,
				  char *err, size_t errlen)
{
	struct trace_dir *t;
	json_error_t jerr;
	struct stat st;
	char *vm_path = NULL, *text;
	json_t *vm = NULL;
	size_t len;
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
	vm_path = path_join(dir, VM_JSON_FILE);
	if (!t->dir || !vm_path) {
		ret = -ENOMEM;
		goto err_close;
	}
	ret = input_file__read(vm_path, TRACE_DIR_VM_JSON_MAX, &text, &len, err, errlen);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "%s: no vm.json, not a vbts trace directory", dir);
		goto err_close;
	}
	if (ret)
		goto err_close;
	vm = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!vm) {
		char quote[QUOTE_MAX];

		ret = -EINVAL;
		/* jansson's text quotes the file's bytes ("near '...'"). */
		snprintf(err, errlen, "%s: line %d: %s", vm_path, jerr.line,
			 escape__str(quote, sizeof(quote), jerr.text));
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
	if (!t->opts.no_symbols) {
		ret = load_symbols(t, vm);
		if (ret)
			goto err_close;
	}
	flush_warnings(t);
	json_decref(vm);
	free(vm_path);
	return t;

err_close:
	flush_warnings(t);
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

uint32_t trace_dir__vcpu_id(const struct trace_dir *t, unsigned int i)
{
	return t->srcs[i].vcpu_id;
}

void trace_dir__window(const struct trace_dir *t, unsigned int i, uint64_t *first,
		       uint64_t *end)
{
	if (t->srcs[i].seg)
		seg_reader__window(t->srcs[i].seg, first, end);
	else
		ring_reader__window(t->rings[i], first, end);
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
		if (vcpu >= 0 && t->srcs[i].vcpu_id != (uint32_t)vcpu)
			continue;
		if (t->srcs[i].seg) {
			seg_reader__begin(t->srcs[i].seg);
			src[n].ops = &seg_source_ops;
		} else if (ring_reader__begin(t->rings[i])) {
			free(src);
			errno = EIO;
			return NULL;
		} else {
			src[n].ops = &ring_source_ops;
		}
		src[n].vcpu = t->srcs[i].vcpu_id;
		src[n].first_seq = 0;
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

unsigned int trace_dir__damaged(const struct trace_dir *t)
{
	return t->damaged;
}

bool trace_dir__kaslr_slide(const struct trace_dir *t, uint64_t *slide)
{
	if (t->kaslr_slide_known)
		*slide = t->kaslr_slide;
	return t->kaslr_slide_known;
}

const struct procmap *trace_dir__procmap(const struct trace_dir *t)
{
	return t->procmap;
}

bool trace_dir__task_selects(const struct procmap *pm, const struct decoded_record *r,
			     const bool *want, const uint32_t *ids, size_t nr_ids,
			     const struct procmap_task *cr3_task)
{
	const struct procmap_task *t;

	switch (r->type) {
	case DECODED_LOST:
	case DECODED_START:
	case DECODED_STOP:
	case DECODED_FREEZE:
	case DECODED_UNKNOWN:
		return true;
	default:
		break;
	}
	if (!r->thread_valid)
		return cr3_task && want[cr3_task->process];
	for (size_t i = 0; i < nr_ids; i++)
		if (ids[i] == r->thread_pid || ids[i] == r->thread_tgid)
			return true;
	t = procmap__lookup_thread(pm, r->thread_pid, r->thread_tgid, r->time, r->time_valid);
	if (t && want[t->process])
		return true;
	return cr3_task && want[cr3_task->process];
}

const struct symbols *trace_dir__symbols(const struct trace_dir *t)
{
	return t->symbols;
}

const struct symbolizer *trace_dir__symbolizer(const struct trace_dir *t)
{
	return t->symbolizer;
}

void trace_dir__close(struct trace_dir *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nr_vcpus; i++) {
		ring_reader__close(t->rings[i]);
		seg_reader__close(t->srcs[i].seg);
	}
	free(t->rings);
	free(t->srcs);
	procmap__free(t->procmap);
	symbolizer__free(t->symbolizer);
	symbol_files__free(t->files);
	free(t->dir);
	free(t);
}
