#include "metrics_text.h"

#include <inttypes.h>

/* Long enough for any resource name xlb accepts in practice; longer values are cut. */
#define XLB_LABEL_VALUE_MAX 1024

const char *xlb_metrics_escape(const char *in, char *out, size_t len)
{
    size_t o = 0;
    for (; *in && o + 3 < len; in++) {
        if (*in == '\\' || *in == '"' || *in == '\n') {
            out[o++] = '\\';
            out[o++] = *in == '\n' ? 'n' : *in;
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
    return out;
}

void xlb_metrics_family(struct xlb_text *t, const char *name, const char *type, const char *help)
{
    xlb_text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void name_and_labels(struct xlb_text *t, const char *name, const struct xlb_label *labels,
                            size_t n)
{
    xlb_text_printf(t, "%s", name);
    for (size_t i = 0; i < n; i++) {
        char value[XLB_LABEL_VALUE_MAX];
        xlb_text_printf(t, "%s%s=\"%s\"", i == 0 ? "{" : ",", labels[i].name,
                        xlb_metrics_escape(labels[i].value, value, sizeof(value)));
    }
    if (n > 0)
        xlb_text_printf(t, "}");
}

void xlb_metrics_sample(struct xlb_text *t, const char *name, const struct xlb_label *labels,
                        size_t n, uint64_t value)
{
    name_and_labels(t, name, labels, n);
    xlb_text_printf(t, " %" PRIu64 "\n", value);
}

void xlb_metrics_sample_signed(struct xlb_text *t, const char *name, const struct xlb_label *labels,
                               size_t n, int64_t value)
{
    name_and_labels(t, name, labels, n);
    xlb_text_printf(t, " %" PRId64 "\n", value);
}
