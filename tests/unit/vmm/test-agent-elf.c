// SPDX-License-Identifier: GPL-2.0
/*
 * test-agent-elf.c - the guest agent's messages on the host: agent-proc/-map lines, ELF
 * uploads verified by build ID into DIR/debuginfod, and hostile uploads (forged build IDs,
 * path traversal, oversize, bad base64, out-of-order chunks, budgets) counted and dropped.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vbts/agent-base64.h>
#include <vbts/agent-proto.h>

#include "agent.h"
#include "elf-store.h"
#include "readelf-id.h"
#include "test-files.h"
#include "tests.h"

struct blob {
	unsigned char *buf;
	size_t len;
};

static struct blob read_blob(const char *path)
{
	struct blob b = { 0 };

	b.buf = test__slurp(path, &b.len);
	return b;
}

static void feed_str(struct agent *a, const char *s)
{
	for (; *s; s++)
		agent__feed(a, 0, (uint8_t)*s);
}

/* Send @b as the agent does, announced as @id (chunks of @chunk bytes). */
static void upload(struct agent *a, const char *id, const struct blob *b, size_t chunk)
{
	char line[2 * VBTS_AGENT_LINE_MAX], data[4 * VBTS_AGENT_ELF_CHUNK / 3 + 8];

	snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"%s\","
		 "\"size\":%zu}\n", id, b->len);
	feed_str(a, line);
	for (size_t off = 0; off < b->len; off += chunk) {
		size_t n = b->len - off < chunk ? b->len - off : chunk;

		agent_base64__encode(b->buf + off, n, data);
		snprintf(line, sizeof(line), "{\"event\":\"agent-elf-data\",\"off\":%zu,"
			 "\"data\":\"%s\"}\n", off, data);
		ck_assert_uint_lt(strlen(line), VBTS_AGENT_LINE_MAX);
		feed_str(a, line);
	}
	feed_str(a, "{\"event\":\"agent-elf-end\"}\n");
}

struct fixture {
	char dir[64];
	FILE *ev;
	struct agent *a;
	struct blob hello;
	char id[2 * VBTS_AGENT_BUILD_ID_MAX + 1];
};

static void fixture_init(struct fixture *f)
{
	strcpy(f->dir, "/tmp/vbts-agent-elf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	f->ev = tmpfile();
	f->a = agent__create(1, f->ev, 0, VBTS_AGENT_EVENTS_MAX);
	ck_assert_int_eq(agent__set_store(f->a, f->dir), 0);
	f->hello = read_blob(HELLO_ELF);
	readelf_id__get(HELLO_ELF, f->id, sizeof(f->id));
}

static void fixture_fini(struct fixture *f)
{
	agent__destroy(f->a);
	fclose(f->ev);
	free(f->hello.buf);
	ck_assert_int_eq(test__remove_tree(f->dir), 0);
}

static bool stored(const struct fixture *f, const char *id)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/debuginfod/%s/executable", f->dir, id);
	return !access(path, F_OK);
}

static int events(struct fixture *f, const char *name)
{
	char line[1024];
	int n = 0;

	fflush(f->ev);
	rewind(f->ev);
	while (fgets(line, sizeof(line), f->ev)) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_ptr_nonnull(o);
		n += !strcmp(json_string_value(json_object_get(o, "event")), name);
		json_decref(o);
	}
	return n;
}

START_TEST(test_elf_build_id_reader)
{
	struct blob b = read_blob(HELLO_ELF);
	char hex[2 * VBTS_AGENT_BUILD_ID_MAX + 1], want[sizeof(hex)];

	readelf_id__get(HELLO_ELF, want, sizeof(want));
	ck_assert_int_eq(elf_store__build_id(b.buf, b.len, hex, sizeof(hex)), 0);
	ck_assert_str_eq(hex, want);
	ck_assert_int_eq(elf_store__build_id(b.buf, 10, hex, sizeof(hex)), -ENOEXEC);
	ck_assert_int_eq(elf_store__build_id("not an elf", 10, hex, sizeof(hex)), -ENOEXEC);
	free(b.buf);
}
END_TEST

START_TEST(test_elf_valid_build_id)
{
	ck_assert(elf_store__valid_build_id("0a"));
	ck_assert(elf_store__valid_build_id("0123456789abcdef0123456789abcdef01234567"));
	ck_assert(!elf_store__valid_build_id(""));
	ck_assert(!elf_store__valid_build_id("a"));
	ck_assert(!elf_store__valid_build_id("abc"));
	ck_assert(!elf_store__valid_build_id("ABCD"));
	ck_assert(!elf_store__valid_build_id("../../etc"));
	ck_assert(!elf_store__valid_build_id("ab/cd"));
	ck_assert(!elf_store__valid_build_id(".."));
	ck_assert(!elf_store__valid_build_id(
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00"));
}
END_TEST

/* A good upload lands, byte for byte, in debuginfod's layout, and is announced once. */
START_TEST(test_elf_upload_stored)
{
	struct fixture f;
	struct agent_stats st;
	char path[256];
	struct blob got;

	fixture_init(&f);
	upload(f.a, f.id, &f.hello, VBTS_AGENT_ELF_CHUNK);
	ck_assert(stored(&f, f.id));
	snprintf(path, sizeof(path), "%s/debuginfod/%s/executable", f.dir, f.id);
	got = read_blob(path);
	ck_assert_uint_eq(got.len, f.hello.len);
	ck_assert_mem_eq(got.buf, f.hello.buf, got.len);
	free(got.buf);
	ck_assert_int_eq(events(&f, "agent-elf"), 1);
	/* Again: a duplicate, dropped, not announced twice. */
	upload(f.a, f.id, &f.hello, 100);
	ck_assert_int_eq(events(&f, "agent-elf"), 1);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.stored, 1);
	ck_assert_uint_eq(st.elf.bytes, f.hello.len);
	ck_assert_uint_eq(st.elf.duplicate, 1);
	ck_assert_uint_ge(st.elf_dropped, 1);
	fixture_fini(&f);
}
END_TEST

/* A file announced under another (valid) build ID is not stored under either. */
START_TEST(test_elf_forged_build_id)
{
	struct fixture f;
	struct agent_stats st;
	char forged[sizeof(f.id)];

	fixture_init(&f);
	strcpy(forged, f.id);
	forged[0] = forged[0] == '0' ? '1' : '0';
	upload(f.a, forged, &f.hello, VBTS_AGENT_ELF_CHUNK);
	ck_assert(!stored(&f, forged));
	ck_assert(!stored(&f, f.id));
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.mismatch, 1);
	ck_assert_uint_eq(st.elf.stored, 0);
	ck_assert_int_eq(events(&f, "agent-elf"), 0);
	/* Not an ELF file at all. */
	{
		struct blob junk = { (unsigned char *)"just some text, no ELF", 22 };

		upload(f.a, f.id, &junk, 10);
	}
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.mismatch, 2);
	ck_assert(!stored(&f, f.id));
	fixture_fini(&f);
}
END_TEST

/* Build IDs that would name another directory never reach the file system. */
START_TEST(test_elf_path_traversal)
{
	static const char *const ids[] = { "../../../tmp/x", "..", "ab/../../cd", "ABCDEF",
					   "abc", "a\\u0000b", "" };
	struct fixture f;
	struct agent_stats st;
	struct stat sb;
	char path[128];

	fixture_init(&f);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		upload(f.a, ids[i], &f.hello, VBTS_AGENT_ELF_CHUNK);
	agent__stats(f.a, &st);
	/* The NUL is refused by the JSON parser already. */
	ck_assert_uint_eq(st.elf.bad_id, sizeof(ids) / sizeof(ids[0]) - 1);
	ck_assert_uint_eq(st.invalid, 1);
	ck_assert_uint_eq(st.elf.stored, 0);
	snprintf(path, sizeof(path), "%s/debuginfod", f.dir);
	ck_assert_int_ne(stat(path, &sb), 0); /* nothing was created */
	fixture_fini(&f);
}
END_TEST

/* Oversize, bad base64, out-of-order and excess chunks, an early end: dropped and counted. */
START_TEST(test_elf_hostile_uploads)
{
	struct fixture f;
	struct agent_stats st;
	char line[VBTS_AGENT_LINE_MAX * 2];

	fixture_init(&f);
	/* Over the per-file limit. */
	snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"build_id\":\"%s\","
		 "\"size\":%u}\n", f.id, VBTS_AGENT_ELF_FILE_MAX + 1);
	feed_str(f.a, line);
	snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"build_id\":\"%s\","
		 "\"size\":-5}\n", f.id);
	feed_str(f.a, line);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.too_big, 1);
	ck_assert_uint_eq(st.elf_dropped, 2);
	/* Bad base64, then the rest of the upload has nothing to go to. */
	snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"build_id\":\"%s\","
		 "\"size\":8}\n", f.id);
	feed_str(f.a, line);
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"!!!!\"}\n");
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"QUJDRA=A\"}\n");
	feed_str(f.a, "{\"event\":\"agent-elf-end\"}\n");
	/* A chunk out of order, one past the announced size. */
	feed_str(f.a, line);
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":4,\"data\":\"QUJDRA==\"}\n");
	feed_str(f.a, line);
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"QUJDREVGR0hJSktM\"}\n");
	/* An end before all the bytes came. */
	feed_str(f.a, line);
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"QUJDRA==\"}\n");
	feed_str(f.a, "{\"event\":\"agent-elf-end\"}\n");
	/* Chunk over the line limit: too long, dropped before parsing. */
	memset(line, 'A', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	feed_str(f.a, line);
	/* Ill-typed members, and a forged verified-file event. */
	feed_str(f.a, "{\"event\":\"agent-elf-begin\",\"build_id\":7,\"size\":\"8\"}\n");
	feed_str(f.a, "{\"event\":\"agent-elf-data\",\"off\":\"0\",\"data\":1}\n");
	feed_str(f.a, "{\"event\":\"agent-elf\",\"build_id\":\"abcd\",\"size\":8}\n");
	feed_str(f.a, "{\"event\":\"agent-elf-what\"}\n");
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.stored, 0);
	ck_assert_uint_ge(st.elf.bad_data, 5);
	ck_assert_uint_eq(st.too_long, 1);
	ck_assert_uint_eq(st.invalid, 2);
	ck_assert_int_eq(events(&f, "agent-elf"), 0);
	ck_assert(!stored(&f, f.id));
	/* The channel still works: a good upload after all that. */
	upload(f.a, f.id, &f.hello, VBTS_AGENT_ELF_CHUNK);
	ck_assert(stored(&f, f.id));
	fixture_fini(&f);
}
END_TEST

/* The per-run budgets: files and bytes. */
START_TEST(test_elf_budget)
{
	struct elf_store_limits lim = { .file_max = 1 << 20, .total_max = 1 << 20,
					.files_max = 1 };
	struct elf_store_stats st;
	struct elf_store *s;
	struct blob b = read_blob(HELLO_ELF);
	char dir[] = "/tmp/vbts-elf-budget.XXXXXX", cmd[128], id[129];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	readelf_id__get(HELLO_ELF, id, sizeof(id));
	s = elf_store__create(dir, &lim);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(elf_store__begin(s, id, b.len), 0);
	ck_assert_int_eq(elf_store__data(s, 0, b.buf, b.len), 0);
	ck_assert_int_eq(elf_store__end(s, NULL, NULL), 0);
	/* One file stored: the next begin is over the file count. */
	ck_assert_int_eq(elf_store__begin(s, "abcd", 10), -ENOSPC);
	elf_store__destroy(s);
	lim.files_max = 100;
	lim.total_max = b.len + 10;
	s = elf_store__create(dir, &lim);
	ck_assert_int_eq(elf_store__begin(s, id, b.len), -EEXIST); /* already in DIR */
	ck_assert_int_eq(elf_store__begin(s, "abcd", 11), 0);
	ck_assert_int_eq(elf_store__begin(s, "abcd", b.len + 11), -ENOSPC);
	ck_assert_int_eq(elf_store__begin(s, "abcd", (1 << 20) + 1), -EFBIG);
	elf_store__stats(s, &st);
	ck_assert_uint_eq(st.over_budget, 1);
	ck_assert_uint_eq(st.too_big, 1);
	ck_assert_uint_eq(st.duplicate, 1);
	ck_assert_uint_eq(st.abandoned, 1);
	elf_store__destroy(s);
	free(b.buf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* agent-proc and agent-map keep their members; paths longer than the limit are dropped. */
START_TEST(test_agent_map_lines)
{
	struct fixture f;
	char line[VBTS_AGENT_LINE_MAX + 1], path[VBTS_AGENT_PATH_MAX + 2];
	struct agent_stats st;
	json_t *o;

	fixture_init(&f);
	feed_str(f.a, "{\"event\":\"agent-map\",\"v\":1,\"pid\":60,\"start\":\"0x1000\",\"end\":"
		      "\"0x2000\",\"offset\":\"0x0\",\"path\":\"/bin/demo\",\"build_id\":\"abcd\"}\n");
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(line, sizeof(line), "{\"event\":\"agent-proc\",\"pid\":60,\"exe\":\"%s\"}\n",
		 path);
	feed_str(f.a, line);
	fflush(f.ev);
	rewind(f.ev);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f.ev));
	o = json_loads(line, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(o, "path")), "/bin/demo");
	ck_assert_str_eq(json_string_value(json_object_get(o, "start")), "0x1000");
	ck_assert_str_eq(json_string_value(json_object_get(o, "build_id")), "abcd");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "v")), 1);
	json_decref(o);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f.ev));
	o = json_loads(line, 0, NULL);
	ck_assert_ptr_null(json_object_get(o, "exe"));
	json_decref(o);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.stored, 2);
	ck_assert_uint_eq(st.members_dropped, 1);
	fixture_fini(&f);
}
END_TEST

/* Without a trace directory uploads are counted and dropped. */
START_TEST(test_elf_no_store)
{
	struct agent *a = agent__create(1, NULL, 0, VBTS_AGENT_EVENTS_MAX);
	struct agent_stats st;

	feed_str(a, "{\"event\":\"agent-elf-begin\",\"build_id\":\"abcd\",\"size\":4}\n");
	feed_str(a, "{\"event\":\"agent-elf-end\"}\n");
	agent__stats(a, &st);
	ck_assert_uint_eq(st.elf_dropped, 2);
	agent__destroy(a);
}
END_TEST

/*
 * What vbts-agent really sends (its stdout transport, one scan of this machine's /proc) goes
 * through the channel without a refusal: this process is reported with its executable's build
 * ID, and every file stored has the build ID it is stored under.
 */
START_TEST(test_agent_program_output)
{
	char cmd[256], exe[512], want[2 * VBTS_AGENT_BUILD_ID_MAX + 1], hex[sizeof(want)];
	char line[VBTS_AGENT_LINE_MAX + 2];
	struct agent_stats st;
	struct fixture f;
	bool self = false, self_map = false;
	unsigned int elf = 0;
	struct blob me;
	ssize_t n;
	FILE *p;
	int c;

	fixture_init(&f);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	me = read_blob(exe);
	ck_assert_int_eq(elf_store__build_id(me.buf, me.len, want, sizeof(want)), 0);
	free(me.buf);
	snprintf(cmd, sizeof(cmd), "%s -t stdout -1 -m 4194304 -b 16777216", VBTS_AGENT_EXE);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while ((c = fgetc(p)) != EOF)
		agent__feed(f.a, 0, (uint8_t)c);
	ck_assert_int_eq(pclose(p), 0);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.invalid, 0);
	ck_assert_uint_eq(st.too_long, 0);
	ck_assert_uint_eq(st.elf_dropped, 0);
	ck_assert_uint_eq(st.elf.mismatch, 0);
	ck_assert_uint_eq(st.elf.bad_data, 0);
	ck_assert_uint_ge(st.elf.stored, 1);
	fflush(f.ev);
	rewind(f.ev);
	while (fgets(line, sizeof(line), f.ev)) {
		json_t *o = json_loads(line, 0, NULL);
		const char *ev, *id;
		char path[256];
		struct blob b;

		ck_assert_ptr_nonnull(o);
		ev = json_string_value(json_object_get(o, "event"));
		if (json_integer_value(json_object_get(o, "pid")) == getpid()) {
			/* Its exe: this program, or the tool that runs it (valgrind). */
			if (!strcmp(ev, "agent-proc"))
				self |= json_is_string(json_object_get(o, "exe"));
			if (!strcmp(ev, "agent-map") && json_object_get(o, "build_id"))
				self_map |= !strcmp(json_string_value(json_object_get(o, "build_id")),
						    want);
		}
		if (!strcmp(ev, "agent-elf")) {
			id = json_string_value(json_object_get(o, "build_id"));
			snprintf(path, sizeof(path), "%s/debuginfod/%s/executable", f.dir, id);
			b = read_blob(path);
			ck_assert_uint_eq(b.len, json_integer_value(json_object_get(o, "size")));
			ck_assert_int_eq(elf_store__build_id(b.buf, b.len, hex, sizeof(hex)), 0);
			ck_assert_str_eq(hex, id);
			free(b.buf);
			elf++;
		}
		json_decref(o);
	}
	ck_assert(self);
	ck_assert(self_map);
	ck_assert_uint_eq(elf, st.elf.stored);
	fixture_fini(&f);
}
END_TEST

/* Append to a growing string. */
static void cat(char **s, size_t *len, const char *add)
{
	size_t n = strlen(add);

	*s = realloc(*s, *len + n + 1);
	ck_assert_ptr_nonnull(*s);
	memcpy(*s + *len, add, n + 1);
	*len += n;
}

/* The agent's stream: agent-proc, then @b uploaded as @id. */
static char *agent_stream(const char *id, const struct blob *b, size_t *len)
{
	char line[2 * VBTS_AGENT_LINE_MAX], data[4 * VBTS_AGENT_ELF_CHUNK / 3 + 8];
	char *s = NULL;

	*len = 0;
	cat(&s, len, "{\"event\":\"agent-proc\",\"v\":1,\"pid\":60,\"comm\":\"demo\"}\n");
	snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"%s\","
		 "\"size\":%zu}\n", id, b->len);
	cat(&s, len, line);
	for (size_t off = 0; off < b->len; off += VBTS_AGENT_ELF_CHUNK) {
		size_t n = b->len - off < VBTS_AGENT_ELF_CHUNK ? b->len - off : VBTS_AGENT_ELF_CHUNK;

		agent_base64__encode(b->buf + off, n, data);
		snprintf(line, sizeof(line), "{\"event\":\"agent-elf-data\",\"off\":%zu,"
			 "\"data\":\"%s\"}\n", off, data);
		cat(&s, len, line);
	}
	cat(&s, len, "{\"event\":\"agent-elf-end\"}\n");
	return s;
}

/*
 * Two processes write the channel at once on one vCPU, a byte each in turn, as two processes
 * writing through /dev/port do when the guest switches between them: the agent's lines and
 * its upload arrive whole; every hostile line is dropped and counted as what it is, and none
 * disturbs the agent's upload (a begin, data or an end of another address space).
 */
START_TEST(test_elf_interleaved_writers)
{
	static const char *const hostile[] = {
		"{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"00112233\",\"size\":16}\n",
		"{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"!!!!\"}\n",
		"{\"event\":\"agent-elf-end\"}\n",
		"{\"event\":\"exec\",\"pid\":1,\"name\":\"demo\",\"cr3\":\"0x1000\"}\n",
		"\x01\xff garbage\n",
	};
	size_t alen, hlen = 0, ai = 0, hi = 0, rounds = 0;
	char junk[VBTS_AGENT_LINE_MAX - 100];
	struct agent_stats st;
	struct fixture f;
	char *as, *hs = NULL;

	fixture_init(&f);
	agent__set_introspected(f.a, true);
	as = agent_stream(f.id, &f.hello, &alen);
	/* Garbage while the agent's begin arrives, and nothing once its last chunk begins:
	 * every hostile upload line comes while the agent's upload is open. */
	memset(junk, 'x', sizeof(junk) - 2);
	junk[sizeof(junk) - 2] = '\n';
	junk[sizeof(junk) - 1] = '\0';
	cat(&hs, &hlen, junk);
	ck_assert_uint_gt(alen, 2 * VBTS_AGENT_LINE_MAX);
	while (hlen < alen - 2 * VBTS_AGENT_LINE_MAX) {
		for (unsigned int i = 0; i < 5; i++)
			cat(&hs, &hlen, hostile[i]);
		rounds++;
	}
	while (ai < alen || hi < hlen) {
		if (ai < alen)
			agent__feed_space(f.a, 0, 0x1000, (uint8_t)as[ai++]);
		if (hi < hlen)
			agent__feed_space(f.a, 0, 0x2000, (uint8_t)hs[hi++]);
	}
	ck_assert(stored(&f, f.id));
	ck_assert_int_eq(events(&f, "agent-elf"), 1);
	ck_assert_int_eq(events(&f, "agent-proc"), 1);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.stored, 1);
	ck_assert_uint_eq(st.elf_dropped, 3 * rounds);
	ck_assert_uint_eq(st.forged, rounds);
	ck_assert_uint_eq(st.invalid, rounds + 1);
	ck_assert_uint_eq(st.too_long, 0);
	ck_assert_uint_eq(st.elf.abandoned, 0);
	free(as);
	free(hs);
	fixture_fini(&f);
}
END_TEST

/*
 * An upload whose owner stops sending holds the store only for AGENT_ELF_IDLE_LINES lines of
 * others: then another address space's begin takes over, and its upload lands.
 */
START_TEST(test_elf_idle_upload_taken_over)
{
	const char *begin = "{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"0011\","
			    "\"size\":16}\n";
	struct agent_stats st;
	struct fixture f;
	size_t alen;
	char *as;

	fixture_init(&f);
	for (const char *p = begin; *p; p++)
		agent__feed_space(f.a, 0, 0x2000, (uint8_t)*p);
	as = agent_stream(f.id, &f.hello, &alen);
	/* Refused while the other upload is young. */
	for (size_t i = 0; i < alen; i++)
		agent__feed_space(f.a, 0, 0x1000, (uint8_t)as[i]);
	ck_assert(!stored(&f, f.id));
	for (unsigned int i = 0; i < AGENT_ELF_IDLE_LINES; i++)
		for (const char *p = "{\"event\":\"agent-noise\"}\n"; *p; p++)
			agent__feed_space(f.a, 0, 0x3000, (uint8_t)*p);
	for (size_t i = 0; i < alen; i++)
		agent__feed_space(f.a, 0, 0x1000, (uint8_t)as[i]);
	ck_assert(stored(&f, f.id));
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.elf.abandoned, 1);
	free(as);
	fixture_fini(&f);
}
END_TEST

/* More writers than line buffers: the least recently written one's partial line is dropped. */
START_TEST(test_agent_writers_evicted)
{
	struct agent_stats st;
	struct fixture f;

	fixture_init(&f);
	for (uint64_t w = 1; w <= AGENT_WRITERS + 1; w++)
		agent__feed_space(f.a, 0, w << 13, '{');
	for (uint64_t w = 2; w <= AGENT_WRITERS + 1; w++)
		for (const char *p = "\"event\":\"agent-noise\"}\n"; *p; p++)
			agent__feed_space(f.a, 0, w << 13, (uint8_t)*p);
	agent__stats(f.a, &st);
	ck_assert_uint_eq(st.invalid, 1);
	ck_assert_int_eq(events(&f, "agent-noise"), AGENT_WRITERS);
	fixture_fini(&f);
}
END_TEST

Suite *agent_elf_suite(void)
{
	Suite *s = suite_create("agent-elf");
	TCase *tc = tcase_create("store");

	/* A hang guard: the agent's scan of this machine's /proc reads every mapped ELF. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_elf_build_id_reader);
	tcase_add_test(tc, test_elf_valid_build_id);
	tcase_add_test(tc, test_elf_upload_stored);
	tcase_add_test(tc, test_elf_forged_build_id);
	tcase_add_test(tc, test_elf_path_traversal);
	tcase_add_test(tc, test_elf_hostile_uploads);
	tcase_add_test(tc, test_elf_budget);
	tcase_add_test(tc, test_agent_map_lines);
	tcase_add_test(tc, test_elf_no_store);
	tcase_add_test(tc, test_agent_program_output);
	tcase_add_test(tc, test_elf_interleaved_writers);
	tcase_add_test(tc, test_elf_idle_upload_taken_over);
	tcase_add_test(tc, test_agent_writers_evicted);
	suite_add_tcase(s, tc);
	return s;
}
