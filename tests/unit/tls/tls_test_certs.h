/* SPDX-License-Identifier: BSD-3-Clause */
/* Certificates the TLS tests make for themselves with OpenSSL, as PEM files in a fresh temporary
 * folder: a CA, servers for two names, a client the CA signed and one it did not. */
#ifndef TLS_TEST_CERTS_H
#define TLS_TEST_CERTS_H

#include <limits.h>

struct tls_test_certs {
    char dir[64];
    char ca[PATH_MAX];
    char server_cert[PATH_MAX], server_key[PATH_MAX];     /* vip.test, by the CA */
    char other_cert[PATH_MAX], other_key[PATH_MAX];       /* other.test, by the CA */
    char client_cert[PATH_MAX], client_key[PATH_MAX];     /* client, by the CA */
    char stranger_cert[PATH_MAX], stranger_key[PATH_MAX]; /* client, self-signed */
};

int tls_test_certs_make(struct tls_test_certs *certs);
void tls_test_certs_remove(const struct tls_test_certs *certs);

#endif
