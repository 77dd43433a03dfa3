/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --check's NUMA warnings, without DPDK: the socket of each lcore (from the
 * CPU the EAL arguments pin it to) and of each PCI port (sysfs numa_node);
 * a stage that polls a port, or a ring whose two ends run, on another
 * socket pays a remote memory access per packet. Unknown sockets (vdevs,
 * floating lcores, one-node machines) never warn. And where the runtime
 * allocates tables and rings: pure functions of the topology and an
 * lcore -> socket map, so tests drive them with a fake one.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_numa.h"
#include "pf_stage.h"

/* NUMA node of CPU @p cpu: the nodeN entry in its sysfs directory, -1 unknown. */
static int
cpu_node(const char *sysroot, long cpu)
{
	char path[512];
	struct dirent *e;
	int node = -1;
	DIR *d;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%ld", sysroot, cpu);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4]))
			node = atoi(e->d_name + 4);
	closedir(d);
	return node;
}

/* NUMA node of a PCI device ("0000:03:00.0" or "03:00.0"), -1 unknown or a vdev. */
static int
pci_node(const char *sysroot, const char *device)
{
	char path[512], addr[64];
	size_t n = strcspn(device, ",");
	int node = -1;
	FILE *f;

	if (strncmp(device, "net_", 4) == 0 || n >= sizeof(addr) - 5)
		return -1;
	/* Bus:device.function without a domain gets the default one. */
	snprintf(addr, sizeof(addr), "%s%.*s", strchr(device, ':') == strrchr(device, ':') ?
		 "0000:" : "", (int)n, device);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", sysroot, addr);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

/*
 * lcore -> CPU from the EAL arguments: "-l LIST" (lcore i runs on CPU i)
 * or "--lcores=L@C,..." with single lcores and CPUs; -1 when it floats.
 */
static long
lcore_cpu(const struct pf_topo *t, unsigned int lcore)
{
	int i;

	for (i = 0; i < t->eal_argc; i++) {
		const char *a = t->eal_argv[i], *p;

		if (strcmp(a, "-l") == 0 && i + 1 < t->eal_argc)
			return lcore;                  /* ids are CPU numbers */
		if (strncmp(a, "--lcores", 8) != 0)
			continue;
		p = a[8] == '=' ? a + 9 : (i + 1 < t->eal_argc ? t->eal_argv[i + 1] : "");
		while (*p != '\0') {
			char *end;
			long l = strtol(p, &end, 10);

			if (end != p && (unsigned long)l == lcore) {
				if (*end == '@' && isdigit((unsigned char)end[1]))
					return strtol(end + 1, NULL, 10);
				if (*end == ',' || *end == '\0')
					return l;
				return -1;             /* a group: may float over sockets */
			}
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
		}
		return -1;
	}
	return -1;
}

/* --check's lcore -> socket: the CPU the EAL arguments pin it to, its sysfs node. */
struct sysfs_map {
	const struct pf_topo *t;
	const char *sysroot;
};

static int
sysfs_lcore_socket(unsigned int lcore, void *arg)
{
	const struct sysfs_map *m = arg;
	long cpu = lcore_cpu(m->t, lcore);

	return cpu < 0 ? -1 : cpu_node(m->sysroot, cpu);
}

static int
stage_socket(const struct pf_topo *t, uint16_t s, pf_lcore_socket_fn fn, void *arg)
{
	return t->stages[s].lcore < 0 ? -1 : fn((unsigned int)t->stages[s].lcore, arg);
}

static uint32_t
stage_flags(const struct pf_stage_conf *sc)
{
	return sc->ops != NULL ? sc->ops->flags : 0;
}

/*
 * Does stage @p r hand packets to stage @p s's group through an edge named
 * after @p s's type (lpm's "neigh" edge)? That stage reads @p s's table;
 * one that only feeds it (rx's "arp") does not.
 */
static bool
feeds(const struct pf_topo *t, uint16_t r, uint16_t s)
{
	const struct pf_stage_conf *rc = &t->stages[r];
	uint16_t e;

	for (e = 1; rc->ops != NULL && e < rc->ops->n_edges && e < PF_MAX_EDGES; e++)
		if (rc->next[e] != PF_NONE && t->stages[rc->next[e]].first == t->stages[s].first &&
		    strcmp(rc->ops->edge_names[e], t->stages[s].ops->type) == 0)
			return true;
	return false;
}

/* The stage that owns the table stage @p s reads: instance 0 for shared tables. */
static uint16_t
table_owner(const struct pf_topo *t, uint16_t s)
{
	return (stage_flags(&t->stages[s]) & PF_STAGE_SHARED) ? t->stages[s].first : s;
}

/* Is stage @p r a reader of the table owned by stage @p o? (o reads its own) */
static bool
reads_table(const struct pf_topo *t, uint16_t r, uint16_t o)
{
	if (stage_flags(&t->stages[o]) & PF_STAGE_UPSTREAM_READS)
		return feeds(t, r, o);
	return table_owner(t, r) == o;
}

int
pf_numa_table_socket(const struct pf_topo *t, uint16_t s, pf_lcore_socket_fn fn, void *arg)
{
	uint16_t o = table_owner(t, s), r;

	if (!(stage_flags(&t->stages[o]) & PF_STAGE_UPSTREAM_READS))
		return stage_socket(t, o, fn, arg);
	/* A table the stages wired to it read per packet: the first one's socket. */
	for (r = 0; r < t->n_stages; r++)
		if (reads_table(t, r, o))
			return stage_socket(t, r, fn, arg);
	return stage_socket(t, o, fn, arg);
}

int
pf_numa_ring_socket(const struct pf_topo *t, uint16_t ring, pf_lcore_socket_fn fn, void *arg)
{
	return stage_socket(t, t->rings[ring].to, fn, arg);
}

/* Warn for each reader of a table on another socket than the table. */
static unsigned int
check_tables(const struct pf_topo *t, pf_lcore_socket_fn fn, void *arg, FILE *out)
{
	unsigned int warned = 0;
	uint16_t o, r;

	for (o = 0; o < t->n_stages; o++) {
		int ts;

		if (table_owner(t, o) != o)
			continue;
		ts = pf_numa_table_socket(t, o, fn, arg);
		for (r = 0; ts >= 0 && r < t->n_stages; r++) {
			int rs = stage_socket(t, r, fn, arg);

			if (r == o || !reads_table(t, r, o) || rs < 0 || rs == ts)
				continue;
			fprintf(out, "%s: warning: stage %s on lcore %d (socket %d) reads the table of stage %s on socket %d: every lookup crosses sockets\n",
				t->file, t->stages[r].name, t->stages[r].lcore, rs, t->stages[o].name,
				ts);
			warned++;
		}
	}
	return warned;
}

unsigned int
pf_numa_check(const struct pf_topo *t, const char *sysroot, FILE *out)
{
	struct sysfs_map m = { .t = t, .sysroot = sysroot };
	unsigned int warned = 0;
	uint16_t s, i;

	for (s = 0; s < t->n_stages; s++) {
		const struct pf_stage_conf *sc = &t->stages[s];
		int sn = stage_socket(t, s, sysfs_lcore_socket, &m);

		for (i = 0; sn >= 0 && i < sc->n_rx_ports; i++) {
			const struct pf_port_conf *pc = &t->ports[sc->rx_ports[i]];
			int pn = pci_node(sysroot, pc->device);

			if (pn >= 0 && pn != sn) {
				fprintf(out, "%s: warning: stage %s on lcore %d (socket %d) polls port %s on socket %d: every packet crosses sockets\n",
					t->file, sc->name, sc->lcore, sn, pc->name, pn);
				warned++;
			}
		}
	}
	for (i = 0; i < t->n_rings; i++) {
		const struct pf_ring_conf *rc = &t->rings[i];
		int a = stage_socket(t, rc->from, sysfs_lcore_socket, &m);
		int b = stage_socket(t, rc->to, sysfs_lcore_socket, &m);

		if (a >= 0 && b >= 0 && a != b) {
			fprintf(out, "%s: warning: ring %s crosses sockets (%s on socket %d, %s on socket %d)\n",
				t->file, rc->name, t->stages[rc->from].name, a, t->stages[rc->to].name,
				b);
			warned++;
		}
	}
	return warned + check_tables(t, sysfs_lcore_socket, &m, out);
}
