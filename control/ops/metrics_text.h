/*
 * Writing the Prometheus text exposition (format 0.0.4): family headers, and samples whose
 * label values are escaped as the format requires (backslash, double quote, newline).
 */
#ifndef XLB_METRICS_TEXT_H
#define XLB_METRICS_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "text_buffer.h"

struct xlb_label {
    const char *name, *value;
};

/* "# HELP name help" and "# TYPE name type". */
void xlb_metrics_family(struct xlb_text *text, const char *name, const char *type,
                        const char *help);

/* name{labels} value; n_labels may be 0. */
void xlb_metrics_sample(struct xlb_text *text, const char *name, const struct xlb_label *labels,
                        size_t n_labels, uint64_t value);
void xlb_metrics_sample_signed(struct xlb_text *text, const char *name,
                               const struct xlb_label *labels, size_t n_labels, int64_t value);

/* in, escaped into out (len bytes, truncated when longer); returns out. */
const char *xlb_metrics_escape(const char *in, char *out, size_t len);

#endif
