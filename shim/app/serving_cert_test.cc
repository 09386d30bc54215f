#include "shim/app/serving_cert.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::app {
namespace {

using ::testing::HasSubstr;

TEST(ServingCertTest, SelfSignedForLocalhostWithItsKey) {
  absl::StatusOr<CertKeyPem> pair =
      SelfSignedCert(absl::FromUnixSeconds(1700000000));
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_THAT(pair->cert, HasSubstr("-----BEGIN CERTIFICATE-----"));
  EXPECT_THAT(pair->key, HasSubstr("-----BEGIN PRIVATE KEY-----"));
  EXPECT_EQ(CertSubject(pair->cert), "CN=localhost@1700000000");
  EXPECT_TRUE(CheckCertKey(*pair).ok());
  // A fresh key each time.
  absl::StatusOr<CertKeyPem> other =
      SelfSignedCert(absl::FromUnixSeconds(1700000000));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->key, pair->key);
}

TEST(ServingCertTest, BadFilesNameTheFlag) {
  absl::StatusOr<CertKeyPem> a = SelfSignedCert(absl::Now());
  absl::StatusOr<CertKeyPem> b = SelfSignedCert(absl::Now());
  ASSERT_TRUE(a.ok() && b.ok());
  absl::Status s = CheckCertKey({"not a certificate", a->key});
  EXPECT_EQ(s.message(), "--tls-cert-file: no PEM certificate in the file");
  s = CheckCertKey({a->cert, "not a key"});
  EXPECT_EQ(s.message(),
            "--tls-private-key-file: no PEM private key in the file");
  s = CheckCertKey({a->cert, b->key});
  EXPECT_EQ(s.message(),
            "--tls-private-key-file is not the key of --tls-cert-file's "
            "(first) certificate");
  EXPECT_EQ(CertSubject("nothing"), "");
}

}  // namespace
}  // namespace kscore::app
