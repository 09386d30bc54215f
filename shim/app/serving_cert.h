#ifndef KSCORE_SHIM_APP_SERVING_CERT_H_
#define KSCORE_SHIM_APP_SERVING_CERT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace kscore::app {

// A certificate chain and its private key, PEM.
struct CertKeyPem {
  std::string cert;
  std::string key;
};

// What kube-scheduler serves when it is given no certificate: a
// self-signed one for "localhost" (CN localhost@<unix time>, SANs DNS
// localhost and IP 127.0.0.1), valid from an hour before `now` for a year.
// Made in memory (an ECDSA P-256 key) and never written to disk.
absl::StatusOr<CertKeyPem> SelfSignedCert(absl::Time now);

// Checks that `pair.cert` holds at least one PEM certificate and that
// `pair.key` is the private key of the first one. Errors name the flags
// --tls-cert-file and --tls-private-key-file.
absl::Status CheckCertKey(const CertKeyPem& pair);

// Sets up `ctx` to serve `pair` (the first certificate, then the rest as the
// chain) with TLS 1.2 or later.
absl::Status UseCertKey(const CertKeyPem& pair, SSL_CTX* ctx);

// The subject of the first certificate in `cert_pem`, one line
// ("CN=localhost@1700000000"); "" when there is none.
std::string CertSubject(const std::string& cert_pem);

}  // namespace kscore::app

#endif  // KSCORE_SHIM_APP_SERVING_CERT_H_
