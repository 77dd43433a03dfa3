/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --check's NUMA warnings, without DPDK: the socket of each lcore (from the
 * CPU the EAL arguments pin it to) and of each PCI port (sysfs numa_node);
 * a stage that polls a port, or a ring whose two ends run, on another
 * socket pays a remote memory access per packet. Unknown sockets (vdevs,
 * floating lcores, one-node machines) never warn.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_numa.h"

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

static int
stage_node(const struct pf_topo *t, const char *sysroot, uint16_t s)
{
	long cpu;

	if (t->stages[s].lcore < 0)
		return -1;
	cpu = lcore_cpu(t, (unsigned int)t->stages[s].lcore);
	return cpu < 0 ? -1 : cpu_node(sysroot, cpu);
}

unsigned int
pf_numa_check(const struct pf_topo *t, const char *sysroot, FILE *out)
{
	unsigned int warned = 0;
	uint16_t s, i;

	for (s = 0; s < t->n_stages; s++) {
		const struct pf_stage_conf *sc = &t->stages[s];
		int sn = stage_node(t, sysroot, s);

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
		int a = stage_node(t, sysroot, rc->from), b = stage_node(t, sysroot, rc->to);

		if (a >= 0 && b >= 0 && a != b) {
			fprintf(out, "%s: warning: ring %s crosses sockets (%s on socket %d, %s on socket %d)\n",
				t->file, rc->name, t->stages[rc->from].name, a, t->stages[rc->to].name,
				b);
			warned++;
		}
	}
	return warned;
}
