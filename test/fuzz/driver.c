/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain main() for a libFuzzer target, so the default gcc build replays
 * corpora and crashers through the same LLVMFuzzerTestOneInput without clang:
 *
 *   fuzz_rx_replay [-p] PATH...
 *
 * Each PATH is a file (one input) or a directory (every regular file in it,
 * in name order, not recursive). With -p, a classic pcap file contributes
 * each of its frames as one input (replay corpus seeds). Prints the number
 * of inputs run; a broken invariant aborts inside the target.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long runs;
static int expand_pcap;

static int
read_all(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (f == NULL)
		return -errno;
	do {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 4096);

			if (nb == NULL) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k != 0);
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

static uint32_t
rd32(const uint8_t *p, int swap)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return swap ? __builtin_bswap32(v) : v;
}

/* Feed each record of a classic pcap; returns 0, or -1 if @p buf is not one. */
static int
run_pcap(const uint8_t *buf, size_t len)
{
	uint32_t magic;
	size_t off = 24;
	int swap;

	if (len < 24)
		return -1;
	magic = rd32(buf, 0);
	if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d)
		swap = 0;
	else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1)
		swap = 1;
	else
		return -1;
	while (off + 16 <= len) {
		uint32_t incl = rd32(buf + off + 8, swap);

		off += 16;
		if (incl > len - off)
			break;
		LLVMFuzzerTestOneInput(buf + off, incl);
		runs++;
		off += incl;
	}
	return 0;
}

static int
run_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	size_t pl = strlen(path);
	int rc = read_all(path, &buf, &len);

	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
		return rc;
	}
	if (!(expand_pcap && pl > 5 && strcmp(path + pl - 5, ".pcap") == 0 &&
	      run_pcap(buf, len) == 0)) {
		LLVMFuzzerTestOneInput(buf, len);
		runs++;
	}
	free(buf);
	return 0;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
run_path(const char *path)
{
	struct dirent **ents;
	struct stat sb;
	char sub[4096];
	int n, i, rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(sb.st_mode))
		return run_file(path);
	n = scandir(path, &ents, NULL, by_name);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && stat(sub, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    run_file(sub) < 0)
			rc = -1;
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int
main(int argc, char **argv)
{
	int i, rc = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-p") == 0) {
			expand_pcap = 1;
			continue;
		}
		if (run_path(argv[i]) < 0)
			rc = 1;
	}
	printf("%s: %lu inputs, no invariant broken\n", argv[0], runs);
	return rc;
}
