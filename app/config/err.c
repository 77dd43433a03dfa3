/* SPDX-License-Identifier: BSD-3-Clause */
/* Error collection for the control path: see include/pf_err.h. */
#include <errno.h>
#include <string.h>

#include "pf_err.h"

int
pf_err_add(struct pf_errs *errs, const char *file, int line, int col, const char *fmt, ...)
{
	struct pf_err *e;
	va_list ap;
	char *c;

	if (errs == NULL)
		return -EINVAL;
	if (errs->n++ >= PF_ERRS_MAX)
		return -EINVAL;
	e = &errs->e[errs->n - 1];
	snprintf(e->file, sizeof(e->file), "%s", file != NULL ? file : "");
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	/* One line per error, whatever bytes the file had in a quoted key or value. */
	for (c = e->msg; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -EINVAL;
}

int
pf_err_format(const struct pf_err *e, char *buf, size_t len)
{
	if (e->file[0] == '\0')
		return snprintf(buf, len, "error: %s", e->msg);
	if (e->line == 0)
		return snprintf(buf, len, "%s: error: %s", e->file, e->msg);
	return snprintf(buf, len, "%s:%d:%d: error: %s", e->file, e->line, e->col, e->msg);
}

void
pf_errs_print(const struct pf_errs *errs, FILE *out)
{
	char line[PF_ERR_MSG_MAX + 300];
	unsigned int i, n = errs->n < PF_ERRS_MAX ? errs->n : PF_ERRS_MAX;

	for (i = 0; i < n; i++) {
		pf_err_format(&errs->e[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	if (errs->n > PF_ERRS_MAX)
		fprintf(out, "error: %u more errors not shown\n", errs->n - PF_ERRS_MAX);
}

void
pf_errs_first(const struct pf_errs *errs, char *buf, size_t len)
{
	const struct pf_err *e = &errs->e[0];
	char line[PF_ERR_MSG_MAX + 300];

	if (len == 0)
		return;
	if (errs->n == 0)
		snprintf(line, sizeof(line), "refused");
	else if (e->file[0] == '\0')
		snprintf(line, sizeof(line), "%s", e->msg);
	else
		pf_err_format(e, line, sizeof(line));
	/* Keep the message, drop a path that makes it too long. */
	if (strlen(line) >= len && errs->n != 0 && e->file[0] != '\0' && strlen(e->msg) + 4 < len)
		snprintf(line, sizeof(line), "%s", e->msg);
	memcpy(buf, line, (strlen(line) < len ? strlen(line) + 1 : len - 1));
	buf[len - 1] = '\0';
}
