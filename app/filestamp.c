/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table-file stamps (include/pf_topo.h): a stage's parse records each file it
 * reads (routes, rules, static MACs) with its size, mtime and a content hash,
 * so that a reload sees an edited table file even when the topology YAML did
 * not change. No DPDK: parse runs for --check too.
 */
#include <errno.h>
#include <fcntl.h>
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

int
pf_file_stamp_read(const char *path, struct pf_file_stamp *out)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	unsigned char *buf;
	struct stat sb;
	ssize_t got, i;
	int fd, rc = 0;

	out->size = 0;
	out->mtime_ns = 0;
	out->hash = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	buf = malloc(STAMP_CHUNK);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	out->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
	for (;;) {
		got = read(fd, buf, STAMP_CHUNK);
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

int
pf_stage_conf_add_file(struct pf_stage_conf *sc, const char *path)
{
	struct pf_file_stamp *f;

	f = realloc(sc->files, (sc->n_files + 1u) * sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	sc->files = f;
	f = &sc->files[sc->n_files];
	f->path = strdup(path);
	if (f->path == NULL)
		return -ENOMEM;
	/* Unreadable: recorded as empty; the parser reports why. */
	(void)pf_file_stamp_read(path, f);
	sc->n_files++;
	return 0;
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
