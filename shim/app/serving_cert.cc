#include "shim/app/serving_cert.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace kscore::app {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509_free>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using Ext = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

// OpenSSL's last error, for a message; clears the queue.
std::string SslError() {
  unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

Bio ReadBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int)
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

// Every certificate in `pem`, in order.
std::vector<Cert> ReadCerts(const std::string& pem) {
  std::vector<Cert> certs;
  Bio bio = ReadBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(x);
  }
  ERR_clear_error();  // the end of the input reads as an error
  return certs;
}

Key ReadKey(const std::string& pem) {
  Bio bio = ReadBio(pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return key;
}

absl::Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return absl::InternalError(absl::StrCat(
        "self-signed certificate: extension ", value, ": ", SslError()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CertKeyPem> SelfSignedCert(absl::Time now) {
  auto fail = [](absl::string_view what) {
    return absl::InternalError(
        absl::StrCat("self-signed certificate: ", what, ": ", SslError()));
  };
  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) return fail("key generation");
  Cert cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), 2) != 1) {
    return fail("new certificate");
  }
  // A random 128-bit serial number, as Go's crypto/x509 users pick.
  Bignum serial(BN_new());
  if (serial == nullptr ||
      BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) ==
          nullptr) {
    return fail("serial number");
  }
  // As client-go's cert.GenerateSelfSignedCertKey: from an hour ago (clock
  // skew), for a year.
  time_t not_before = static_cast<time_t>(absl::ToUnixSeconds(now) - 3600);
  time_t not_after = not_before + time_t{365} * 24 * 3600;
  if (X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, 0, &not_before) ==
          nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), 0, 0, &not_after) ==
          nullptr) {
    return fail("validity");
  }
  const std::string cn = absl::StrCat("localhost@", absl::ToUnixSeconds(now));
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_ASC,
          reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1 ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return fail("subject");
  }
  for (auto [nid, value] :
       {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
        std::pair{NID_key_usage, "critical,digitalSignature,keyEncipherment"},
        std::pair{NID_ext_key_usage, "serverAuth"},
        std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"}}) {
    KSCORE_RETURN_IF_ERROR(AddExtension(cert.get(), nid, value));
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return fail("signing");
  }
  Bio cert_out(BIO_new(BIO_s_mem()));
  Bio key_out(BIO_new(BIO_s_mem()));
  if (cert_out == nullptr || key_out == nullptr ||
      PEM_write_bio_X509(cert_out.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0,
                               nullptr, nullptr) != 1) {
    return fail("PEM encoding");
  }
  return CertKeyPem{BioText(cert_out.get()), BioText(key_out.get())};
}

absl::Status CheckCertKey(const CertKeyPem& pair) {
  std::vector<Cert> certs = ReadCerts(pair.cert);
  if (certs.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert-file: no PEM certificate in the file");
  }
  Key key = ReadKey(pair.key);
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        "--tls-private-key-file: no PEM private key in the file");
  }
  if (X509_check_private_key(certs.front().get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "--tls-private-key-file is not the key of --tls-cert-file's (first) "
        "certificate");
  }
  return absl::OkStatus();
}

absl::Status UseCertKey(const CertKeyPem& pair, SSL_CTX* ctx) {
  std::vector<Cert> certs = ReadCerts(pair.cert);
  Key key = ReadKey(pair.key);
  if (certs.empty() || key == nullptr) {
    return absl::InvalidArgumentError(
        "serving certificate: no PEM certificate "
        "or private key");
  }
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_use_certificate(ctx, certs.front().get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("serving certificate: ", SslError()));
  }
  for (size_t i = 1; i < certs.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, certs[i].get()) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("serving certificate chain: ", SslError()));
    }
  }
  return absl::OkStatus();
}

std::string CertSubject(const std::string& cert_pem) {
  std::vector<Cert> certs = ReadCerts(cert_pem);
  if (certs.empty()) return "";
  Bio out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(certs.front().get()), 0,
                     XN_FLAG_RFC2253);
  return BioText(out.get());
}

}  // namespace kscore::app
