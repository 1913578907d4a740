/*
 * ORCA per-call load reports (A51) as a gRPC server sends them: an OrcaLoadReport serialized
 * by protobuf-c, base64 with or without padding; the figures A58 reads come back, the other
 * fields (maps included) are skipped, and malformed values are refused whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "xds/data/orca/v3/orca_load_report.pb-c.h"
#include "xlb_orca.h"

/* The trailer value of a report, padded or not; returns its length. */
static size_t encode(const Xds__Data__Orca__V3__OrcaLoadReport *m, bool padded, char *out,
                     size_t cap)
{
    uint8_t bytes[4096];
    size_t n = xds__data__orca__v3__orca_load_report__get_packed_size(m);
    assert_true(n <= sizeof(bytes) && (n + 2) / 3 * 4 < cap);
    xds__data__orca__v3__orca_load_report__pack(m, bytes);
    size_t len = (size_t)EVP_EncodeBlock((unsigned char *)out, bytes, (int)n);
    while (!padded && len > 0 && out[len - 1] == '=')
        len--;
    return len;
}

static void test_figures_read_padded_or_not(void **state)
{
    (void)state;
    Xds__Data__Orca__V3__OrcaLoadReport m;
    xds__data__orca__v3__orca_load_report__init(&m);
    m.cpu_utilization = 0.75;
    m.application_utilization = 0.5;
    m.rps_fractional = 123.25;
    m.eps = 1.5;
    m.mem_utilization = 0.1;
    Xds__Data__Orca__V3__OrcaLoadReport__NamedMetricsEntry e1;
    xds__data__orca__v3__orca_load_report__named_metrics_entry__init(&e1);
    static char queue[] = "queue";
    e1.key = queue;
    e1.value = 7;
    Xds__Data__Orca__V3__OrcaLoadReport__NamedMetricsEntry *entries[] = {&e1};
    m.n_named_metrics = 1;
    m.named_metrics = entries;
    for (int padded = 0; padded < 2; padded++) {
        char value[1024];
        size_t len = encode(&m, padded, value, sizeof(value));
        struct xlb_wrr_report r;
        assert_int_equal(xlb_orca_read(value, len, &r), 0);
        assert_true(r.cpu_utilization == 0.75 && r.application_utilization == 0.5);
        assert_true(r.qps == 123.25 && r.eps == 1.5);
    }
}

/* An empty report is a valid message with zeros (which A58 then ignores). */
static void test_empty_report(void **state)
{
    (void)state;
    struct xlb_wrr_report r = {.qps = 9};
    assert_int_equal(xlb_orca_read("", 0, &r), 0);
    assert_true(r.qps == 0 && r.cpu_utilization == 0);
}

static void test_malformed_refused(void **state)
{
    (void)state;
    struct xlb_wrr_report r;
    /* Not base64; a lone sixth bit group; spaces inside. */
    assert_int_equal(xlb_orca_read("!!!!", 4, &r), -EINVAL);
    assert_int_equal(xlb_orca_read("CQAAAAAAAOg/C", 13, &r), -EINVAL);
    assert_int_equal(xlb_orca_read("CQAA AAAAAOg/", 13, &r), -EINVAL);
    /* Base64 of bytes that are no OrcaLoadReport: field 1 as a double cut short ("CQAA" is
     * 0x09 0x00 0x00), and a length-delimited field longer than the message. */
    assert_int_equal(xlb_orca_read("CQAA", 4, &r), -EINVAL);
    assert_int_equal(xlb_orca_read("IgUA", 4, &r), -EINVAL);
    /* Longer than read at all. */
    char big[XLB_ORCA_VALUE_MAX + 4];
    memset(big, 'A', sizeof(big));
    assert_int_equal(xlb_orca_read(big, sizeof(big), &r), -E2BIG);
}

/* Many map entries within the value's bound still fit the decoder's memory. */
static void test_many_entries(void **state)
{
    (void)state;
    Xds__Data__Orca__V3__OrcaLoadReport m;
    xds__data__orca__v3__orca_load_report__init(&m);
    enum { N = 50 }; /* 14 bytes each: 948 base64 characters with rps */
    static char key[] = "k";
    Xds__Data__Orca__V3__OrcaLoadReport__UtilizationEntry e[N], *p[N];
    for (int i = 0; i < N; i++) {
        xds__data__orca__v3__orca_load_report__utilization_entry__init(&e[i]);
        e[i].key = key;
        e[i].value = 0.5;
        p[i] = &e[i];
    }
    m.n_utilization = N;
    m.utilization = p;
    m.rps_fractional = 10;
    char value[1100];
    size_t len = encode(&m, false, value, sizeof(value));
    assert_true(len <= XLB_ORCA_VALUE_MAX);
    struct xlb_wrr_report r;
    assert_int_equal(xlb_orca_read(value, len, &r), 0);
    assert_true(r.qps == 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_read_padded_or_not),
        cmocka_unit_test(test_empty_report),
        cmocka_unit_test(test_malformed_refused),
        cmocka_unit_test(test_many_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
