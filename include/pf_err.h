/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Control-path error collection.
 *
 * Configuration code never stops at the first problem: every check appends a
 * located message to a struct pf_errs and the caller prints them all as
 * "file:line:col: error: message". Only main() decides to exit.
 */
#ifndef PF_ERR_H
#define PF_ERR_H

#include <stdarg.h>
#include <stdio.h>

#define PF_ERR_MSG_MAX 320
#define PF_ERRS_MAX 64

/** Exit status for a bad command line (sysexits.h EX_USAGE). */
#define PF_EXIT_USAGE 64
/** Exit status for configuration errors (sysexits.h EX_CONFIG). */
#define PF_EXIT_CONFIG 78
/** Exit status when the accounting invariant does not hold at exit. */
#define PF_EXIT_ACCOUNTING 3

struct pf_err {
	char file[256];  /**< file the error is in, "" when not file-bound */
	int line;        /**< 1-based line, 0 when unknown */
	int col;         /**< 1-based column, 0 when unknown */
	char msg[PF_ERR_MSG_MAX];
};

struct pf_errs {
	unsigned int n;        /**< errors recorded (may exceed PF_ERRS_MAX) */
	struct pf_err e[PF_ERRS_MAX];
};

/** Record one error; line/col 0 mean "whole file". Returns -EINVAL for chaining. */
int pf_err_add(struct pf_errs *errs, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/** Print every recorded error to @p out, one "file:line:col: error: msg" line each. */
void pf_errs_print(const struct pf_errs *errs, FILE *out);

/** Format one error into @p buf the same way pf_errs_print does. */
int pf_err_format(const struct pf_err *err, char *buf, size_t len);

/**
 * The first error of @p errs as one line that fits @p len: "file:line:col:
 * message", or only the message when the path would not fit; "refused"
 * when there is none.
 */
void pf_errs_first(const struct pf_errs *errs, char *buf, size_t len);

#endif /* PF_ERR_H */
