/*
 * Fuzz target for the LRS client's reading of the server's LoadStatsResponse (which clusters
 * to report, how often): any bytes as the message, with a minimum interval from the first
 * byte. An accepted response must name an interval at least that minimum and clusters that
 * are sorted, unique, non-empty strings the client matches; a refused one must say why.
 */
#include <stdlib.h>
#include <string.h>

#include "lrs_internal.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint64_t min_interval_ms = (uint64_t)data[0] * 100;
    struct xlb_lrs_settings settings;
    char why[256] = "";
    if (xlb_lrs_response_parse(data + 1, size - 1, min_interval_ms, &settings, why, sizeof(why)) !=
        0) {
        CHECK(why[0] != '\0');
        return 0;
    }
    CHECK(settings.interval_ms >= min_interval_ms);
    for (size_t i = 0; i < settings.n_clusters; i++) {
        CHECK(settings.clusters[i] != NULL && settings.clusters[i][0] != '\0');
        CHECK(i == 0 || strcmp(settings.clusters[i - 1], settings.clusters[i]) < 0);
        CHECK(xlb_lrs_settings_wants(&settings, settings.clusters[i]));
    }
    (void)xlb_lrs_settings_wants(&settings, "c1");
    xlb_lrs_settings_free(&settings);
    return 0;
}
