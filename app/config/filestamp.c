/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table-file stamps (include/pf_topo.h): a stage's parse records each file it
 * reads (routes, rules, static MACs) with its size, mtime and a content hash,
 * so that a reload sees an edited table file even when the topology YAML did
 * not change, and a file that changes while it is read is refused. Table
 * files are opened without blocking and read with a size cap. No DPDK:
 * parse runs for --check too.
 */
#define _GNU_SOURCE 1   /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pf_topo.h"

#define STAMP_CHUNK (64 * 1024)

/* A cheap 64-bit hash (multiply-xor over 8-byte words); not cryptographic:
 * it only has to notice edits, and size and mtime are compared too. */
static uint64_t
mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * Open a table file without blocking (pf_file_open_regular), at most
 * PF_TABLE_MAX_BYTES. Returns the fd, or -errno with *@p why saying what is
 * wrong with the file (its type, its size), NULL for an open error.
 */
static int
table_open(const char *path, struct stat *sb, const char **why)
{
	static __thread char buf[64];
	const char *kind;
	int fd = pf_file_open_regular(path, PF_TABLE_MAX_BYTES, sb, &kind);

	*why = NULL;
	if (fd == -EFBIG) {
		*why = "is larger than the table file limit (" PF_TABLE_MAX_TEXT ")";
	} else if (fd < 0 && kind != NULL) {
		snprintf(buf, sizeof(buf), "is %s, not a table file", kind);
		*why = buf;
	}
	return fd;
}

/* Stamp @p path into @p out (path not set). Returns 0 or -errno. */
static int
pf_file_stamp_read(const char *path, struct pf_file_stamp *out)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	unsigned char *buf;
	const char *why;
	struct stat sb;
	ssize_t got, i;
	int fd, rc = 0;

	out->size = 0;
	out->mtime_ns = 0;
	out->hash = 0;
	out->ino = 0;
	out->dev = 0;
	fd = table_open(path, &sb, &why);
	if (fd < 0)
		return fd;
	buf = malloc(STAMP_CHUNK);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	out->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
	out->ino = sb.st_ino;
	out->dev = sb.st_dev;
	/* Only what was there at the open: a file growing while it is read ends
	 * there (and its size, mtime or hash differ at the check after the parse). */
	while (out->size < (uint64_t)sb.st_size) {
		uint64_t want = (uint64_t)sb.st_size - out->size;

		got = read(fd, buf, want < STAMP_CHUNK ? (size_t)want : STAMP_CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			break;
		}
		if (got == 0)
			break;
		/* Chunks are full except the last, so the word split is deterministic. */
		for (i = 0; i + 8 <= got; i += 8) {
			memcpy(&w, buf + i, 8);
			h = mix(h, w);
		}
		for (w = 0; i < got; i++)
			w = w << 8 | buf[i];
		if (got % 8 != 0)
			h = mix(h, w);
		out->size += (uint64_t)got;
	}
	free(buf);
	close(fd);
	out->hash = mix(h, out->size);
	return rc;
}

/* The YAML value that names @p path in @p sc (for the error position). */
static const struct pf_node *
file_node(const struct pf_stage_conf *sc, const char *path, const char **key)
{
	size_t pl = strlen(path), vl;
	uint32_t i;

	*key = NULL;
	for (i = 0; sc->node != NULL && sc->node->kind == PF_NODE_MAP && i < sc->node->n; i++) {
		const struct pf_node *v = sc->node->items[i];

		if (v->kind != PF_NODE_SCALAR)
			continue;
		vl = strlen(v->value);
		if (vl != 0 && vl <= pl && strcmp(path + pl - vl, v->value) == 0) {
			*key = sc->node->keys[i]->value;
			return v;
		}
	}
	return sc->node;
}

/*
 * A regular file whose size is 0 may still hold data: /proc's files say 0 and are read
 * as they are made (/proc/self/status), or refuse to be read (/proc/self/mem: EIO).
 * Read one byte to know: NULL for a truly empty file, else what is wrong.
 */
static const char *
empty_or_pseudo(int fd, char *buf, size_t len)
{
	char c;
	ssize_t got;

	do
		got = read(fd, &c, 1);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return NULL;
	if (got > 0)
		return "is not a table file: its size is 0 yet it holds data (a /proc file?)";
	snprintf(buf, len, "cannot be read: %s", strerror(errno));
	return buf;
}

/* The error at the YAML value that names @p path (the key's position, not the file's). */
static int
file_err(struct pf_stage_conf *sc, const char *path, const char *why, struct pf_errs *errs)
{
	const struct pf_node *v;
	const char *key;

	v = file_node(sc, path, &key);
	return pf_node_err(errs, v, "stages.%s%s%s: '%s' %s", sc->name, key ? "." : "",
			   key ? key : "", path, why);
}

int
pf_stage_conf_add_file(struct pf_stage_conf *sc, const char *path, struct pf_errs *errs)
{
	struct pf_file_stamp *f;
	char buf[160];
	const char *why;
	struct stat sb;
	int fd, rc;

	fd = table_open(path, &sb, &why);
	if (fd >= 0) {
		if (sb.st_size == 0)
			why = empty_or_pseudo(fd, buf, sizeof(buf));
		close(fd);
	} else if (why == NULL) {
		snprintf(buf, sizeof(buf), "cannot be opened: %s", strerror(-fd));
		why = buf;
	}
	if (why != NULL)
		return file_err(sc, path, why, errs);
	f = realloc(sc->files, (sc->n_files + 1u) * sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	sc->files = f;
	f = &sc->files[sc->n_files];
	f->path = strdup(path);
	if (f->path == NULL)
		return -ENOMEM;
	rc = pf_file_stamp_read(path, f);
	if (rc < 0) {
		/* An I/O error, or the file went between the two opens. */
		free(f->path);
		snprintf(buf, sizeof(buf), "cannot be read: %s", strerror(-rc));
		return file_err(sc, path, buf, errs);
	}
	sc->n_files++;
	return 0;
}

/* A stdio stream over a table file's fd that ends where the file ended when opened. */
struct capped {
	int fd;
	uint64_t left;
};

static ssize_t
capped_read(void *cookie, char *buf, size_t size)
{
	struct capped *c = cookie;
	ssize_t got;

	if (size > c->left)
		size = (size_t)c->left;
	if (size == 0)
		return 0;
	do
		got = read(c->fd, buf, size);
	while (got < 0 && errno == EINTR);
	if (got > 0)
		c->left -= (uint64_t)got;
	return got;
}

static int
capped_close(void *cookie)
{
	struct capped *c = cookie;
	int rc = close(c->fd);

	free(c);
	return rc;
}

FILE *
pf_table_fopen(const char *path)
{
	static const cookie_io_functions_t io = { .read = capped_read, .close = capped_close };
	struct capped *c;
	const char *why;
	struct stat sb;
	FILE *f;
	int fd;

	fd = table_open(path, &sb, &why);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	c = malloc(sizeof(*c));
	if (c == NULL) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	c->fd = fd;
	/* What the file held when opened (at most the limit, table_open saw to it):
	 * a file that grows while it is parsed is not read forever. */
	c->left = (uint64_t)sb.st_size;
	f = fopencookie(c, "r", io);
	if (f == NULL) {
		close(fd);
		free(c);
	}
	return f;
}

/* Line number of the first line that is neither blank nor a comment, 0 if none. */
static int
first_entry_line(const char *path)
{
	char line[512];
	int n = 0, k;
	FILE *f = pf_table_fopen(path);

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL && n < 100000) {
		n++;
		for (k = 0; line[k] == ' ' || line[k] == '\t' || line[k] == '\r'; k++)
			;
		if (line[k] != '\n' && line[k] != '\0' && line[k] != '#') {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

int
pf_stage_conf_files_check(struct pf_stage_conf *sc, unsigned int first, struct pf_errs *errs)
{
	struct pf_file_stamp now;
	unsigned int k;
	int rc = 0, line;
	uint16_t i;

	for (i = 0; i < sc->n_files; i++) {
		const struct pf_file_stamp *was = &sc->files[i];

		if (pf_file_stamp_read(was->path, &now) < 0 && was->size == 0)
			continue;   /* unreadable before and after: the parser said why */
		if (now.size != was->size || now.mtime_ns != was->mtime_ns ||
		    now.hash != was->hash || now.ino != was->ino || now.dev != was->dev)
			rc = pf_err_add(errs, was->path, 0, 0,
					"changed while it was read: refused (write the new table "
					"to another file and rename it over this one)");
	}
	/* Errors on a file whose very first entry is wrong: position only. */
	for (i = 0; i < sc->n_files; i++) {
		line = INT_MAX;
		for (k = first; k < errs->n && k < PF_ERRS_MAX; k++)
			if (errs->e[k].line > 0 && errs->e[k].line < line &&
			    strcmp(errs->e[k].file, sc->files[i].path) == 0)
				line = errs->e[k].line;
		if (line == INT_MAX || line != first_entry_line(sc->files[i].path))
			continue;
		for (k = first; k < errs->n && k < PF_ERRS_MAX; k++)
			if (errs->e[k].line > 0 && strcmp(errs->e[k].file, sc->files[i].path) == 0)
				snprintf(errs->e[k].msg, sizeof(errs->e[k].msg),
					 "not a valid entry (content not shown: from its first "
					 "line on, this file does not look like a table)");
	}
	return rc;
}

static const struct pf_file_stamp *
find(const struct pf_stage_conf *sc, const char *path)
{
	uint16_t i;

	for (i = 0; i < sc->n_files; i++)
		if (strcmp(sc->files[i].path, path) == 0)
			return &sc->files[i];
	return NULL;
}

const char *
pf_stage_conf_files_changed(const struct pf_stage_conf *a, const struct pf_stage_conf *b)
{
	const struct pf_file_stamp *x, *y;
	uint16_t i;

	for (i = 0; i < b->n_files; i++) {
		y = &b->files[i];
		x = find(a, y->path);
		if (x == NULL || x->size != y->size || x->mtime_ns != y->mtime_ns ||
		    x->hash != y->hash)
			return y->path;
	}
	for (i = 0; i < a->n_files; i++)
		if (find(b, a->files[i].path) == NULL)
			return a->files[i].path;
	return NULL;
}

void
pf_stage_conf_files_free(struct pf_stage_conf *sc)
{
	uint16_t i;

	for (i = 0; i < sc->n_files; i++)
		free(sc->files[i].path);
	free(sc->files);
	sc->files = NULL;
	sc->n_files = 0;
}
