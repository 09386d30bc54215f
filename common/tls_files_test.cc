#include "common/tls_files.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::common {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadPemFlag, EmptyPathReadsNothing) {
  auto pem = ReadPemFlag("client-ca-file", "");
  ASSERT_TRUE(pem.ok());
  EXPECT_EQ(*pem, "");
}

TEST(ReadPemFlag, ReadsAPemFile) {
  const std::string text =
      "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  auto pem = ReadPemFlag("tls-cert-file", WriteTemp("ok.pem", text));
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ(*pem, text);
}

TEST(ReadPemFlag, MissingFileNamesTheFlag) {
  auto pem = ReadPemFlag("tls-cert-file", "/nonexistent/cert.pem");
  ASSERT_FALSE(pem.ok());
  EXPECT_THAT(pem.status().message(),
              HasSubstr("--tls-cert-file: cannot read /nonexistent/cert.pem"));
}

TEST(ReadPemFlag, RefusesAFileWithoutPem) {
  auto pem = ReadPemFlag("scorer-ca-file", WriteTemp("bad.pem", "hello\n"));
  ASSERT_FALSE(pem.ok());
  EXPECT_THAT(pem.status().message(), HasSubstr("--scorer-ca-file: "));
  EXPECT_THAT(pem.status().message(), HasSubstr("holds no PEM block"));
}

}  // namespace
}  // namespace kscore::common
