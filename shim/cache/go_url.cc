#include "shim/cache/go_url.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kscore::cache::go_url {
namespace {

// url.go's encoding modes that unescape distinguishes.
enum class Mode { kPath, kHost, kZone, kUserPassword, kFragment };

int Unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// The ASCII bytes a host (or an IPv6 zone) may hold unescaped: Go's
// shouldEscape(c, encodeHost) is false for these.
bool HostByte(unsigned char c) {
  static constexpr absl::string_view kPunct = "!\"$&'()*+,-.:;<=>[]_~";
  return absl::ascii_isalnum(c) ||
         kPunct.find(static_cast<char>(c)) != absl::string_view::npos;
}

absl::Status EscapeError(absl::string_view s) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid URL escape ", Quote(s)));
}

// One % escape at s[i] (three bytes, checked hex): an error where the mode
// forbids it.
absl::Status CheckEscape(absl::string_view s, size_t i, Mode mode) {
  const absl::string_view esc = s.substr(i, 3);
  if (mode == Mode::kHost && Unhex(s[i + 1]) < 8 && esc != "%25")
    return EscapeError(esc);
  if (mode == Mode::kZone) {
    const int v = Unhex(s[i + 1]) << 4 | Unhex(s[i + 2]);
    if (esc != "%25" && v != ' ' && !HostByte(static_cast<unsigned char>(v)))
      return EscapeError(esc);
  }
  return absl::OkStatus();
}

// url.go's unescape (no mode here turns '+' into a space).
absl::StatusOr<std::string> Unescape(absl::string_view s, Mode mode) {
  bool escaped = false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '%') {
      escaped = true;
      if (i + 2 >= s.size() || !absl::ascii_isxdigit(s[i + 1]) ||
          !absl::ascii_isxdigit(s[i + 2])) {
        return EscapeError(s.substr(i, 3));
      }
      if (absl::Status st = CheckEscape(s, i, mode); !st.ok()) return st;
      i += 3;
      continue;
    }
    if ((mode == Mode::kHost || mode == Mode::kZone) && c < 0x80 &&
        !HostByte(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid character ", Quote(s.substr(i, 1)), " in host name"));
    }
    ++i;
  }
  if (!escaped) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      out += static_cast<char>(Unhex(s[i + 1]) << 4 | Unhex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// validOptionalPort: empty, or ':' and digits.
bool ValidOptionalPort(absl::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  for (char c : port.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

absl::Status InvalidPort(absl::string_view port) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid port ", Quote(port), " after host"));
}

// netip.ParseAddr for a bracketed literal, by inet_pton: an IPv4 address
// is refused as upstream refuses it.
absl::Status CheckLiteral(const std::string& addr) {
  const size_t zone = addr.find('%');
  const std::string ip = addr.substr(0, zone);
  unsigned char buf[16];
  if (ip.find(':') != std::string::npos) {
    if ((zone == std::string::npos || zone + 1 < addr.size()) &&
        inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
      return absl::OkStatus();
    }
  } else if (zone == std::string::npos &&
             inet_pton(AF_INET, ip.c_str(), buf) == 1) {
    return absl::InvalidArgumentError("invalid IP-literal");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid host: ParseAddr(", Quote(addr), "): unable to parse IP"));
}

// parseHost's IP-literal branch, for a host that starts with '['.
absl::Status ParseLiteral(absl::string_view host) {
  const size_t close = host.rfind(']');
  if (close == absl::string_view::npos)
    return absl::InvalidArgumentError("missing ']' in host");
  const absl::string_view port = host.substr(close + 1);
  if (!ValidOptionalPort(port)) return InvalidPort(port);
  const absl::string_view name = host.substr(1, close - 1);
  std::string addr;
  if (size_t zone = name.find("%25"); zone != absl::string_view::npos) {
    absl::StatusOr<std::string> h = Unescape(name.substr(0, zone), Mode::kHost);
    if (!h.ok()) return h.status();
    absl::StatusOr<std::string> z = Unescape(name.substr(zone), Mode::kZone);
    if (!z.ok()) return z.status();
    addr = *h + *z;
  } else {
    absl::StatusOr<std::string> h = Unescape(name, Mode::kHost);
    if (!h.ok()) return h.status();
    addr = *h;
  }
  return CheckLiteral(addr);
}

// parseHost for a scheme other than http and https (the last colon starts
// the port).
absl::Status ParseHost(absl::string_view host) {
  const size_t open = host.rfind('[');
  if (open != absl::string_view::npos && open > 0)
    return absl::InvalidArgumentError("invalid IP-literal");
  if (open == 0) return ParseLiteral(host);
  if (size_t colon = host.rfind(':'); colon != absl::string_view::npos) {
    const absl::string_view port = host.substr(colon);
    if (!ValidOptionalPort(port)) return InvalidPort(port);
  }
  return Unescape(host, Mode::kHost).status();
}

// validUserinfo: a byte past ASCII is part of a rune it refuses.
bool ValidUserinfo(absl::string_view s) {
  static constexpr absl::string_view kPunct = "-._:~!$&'()*+,;=%@";
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        kPunct.find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

absl::Status ParseAuthority(absl::string_view authority) {
  const size_t at = authority.rfind('@');
  if (at == absl::string_view::npos) return ParseHost(authority);
  if (absl::Status s = ParseHost(authority.substr(at + 1)); !s.ok()) return s;
  const absl::string_view userinfo = authority.substr(0, at);
  if (!ValidUserinfo(userinfo))
    return absl::InvalidArgumentError("net/url: invalid userinfo");
  const size_t colon = userinfo.find(':');
  if (absl::Status s =
          Unescape(userinfo.substr(0, colon), Mode::kUserPassword).status();
      !s.ok() || colon == absl::string_view::npos) {
    return s;
  }
  return Unescape(userinfo.substr(colon + 1), Mode::kUserPassword).status();
}

// getScheme's split: the scheme's length, or 0 when `raw` has none.
absl::StatusOr<size_t> SchemeLength(absl::string_view raw) {
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (absl::ascii_isalpha(c)) continue;
    if (absl::ascii_isdigit(c) || c == '+' || c == '-' || c == '.') {
      if (i == 0) return 0;
      continue;
    }
    if (c != ':') return 0;
    if (i == 0) return absl::InvalidArgumentError("missing protocol scheme");
    return i;
  }
  return 0;
}

// url.go's parse(raw, false), for a URL with a scheme: its Path.
absl::StatusOr<std::string> ParseNoFragment(absl::string_view raw) {
  for (char c : raw) {
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) {
      return absl::InvalidArgumentError(
          "net/url: invalid control character in URL");
    }
  }
  absl::StatusOr<size_t> scheme = SchemeLength(raw);
  if (!scheme.ok()) return scheme.status();
  if (*scheme == 0)
    return absl::UnimplementedError("only URLs with a scheme are parsed");
  absl::string_view rest = raw.substr(*scheme + 1);
  if (absl::EndsWith(rest, "?") && rest.find('?') == rest.size() - 1) {
    rest.remove_suffix(1);
  } else {
    rest = rest.substr(0, rest.find('?'));
  }
  if (!absl::StartsWith(rest, "/")) return std::string();  // opaque
  if (absl::StartsWith(rest, "//")) {
    absl::string_view authority = rest.substr(2);
    const size_t slash = authority.find('/');
    rest = slash == absl::string_view::npos ? absl::string_view()
                                            : authority.substr(slash);
    authority = authority.substr(0, slash);
    if (absl::Status s = ParseAuthority(authority); !s.ok()) return s;
  }
  return Unescape(rest, Mode::kPath);
}

// A UTF-8 sequence at s[i] as Go's utf8.DecodeRuneInString decodes it:
// the rune and its width, or -1 and width 1 when invalid.
int32_t DecodeRune(absl::string_view s, size_t i, size_t* width) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *width = 1;
  if (b0 < 0x80) return b0;
  int n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 ? 2 : 0;
  if (n == 0 || b0 > 0xF4 || i + n > s.size()) return -1;
  int32_t r = b0 & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return -1;
    r = r << 6 | (b & 0x3F);
  }
  static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (r < kMin[n] || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return -1;
  *width = n;
  return r;
}

// unicode.IsPrint, past ASCII (see Quote).
bool PrintableNonAscii(int32_t r) {
  struct Range {
    int32_t lo, hi;
  };
  static constexpr Range kNot[] = {
      {0x80, 0xA0},       {0xAD, 0xAD},       {0x600, 0x605},
      {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},
      {0x180E, 0x180E},   {0x1680, 0x1680},   {0x2000, 0x200F},
      {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},
      {0x3000, 0x3000},   {0xE000, 0xF8FF},   {0xFDD0, 0xFDEF},
      {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0xFFFE, 0xFFFF},
      {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF}};
  for (const Range& x : kNot) {
    if (r >= x.lo && r <= x.hi) return false;
  }
  return true;
}

void AppendHex(uint32_t v, int digits, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int s = 4 * (digits - 1); s >= 0; s -= 4) *out += kHex[(v >> s) & 0xF];
}

// strconv's appendEscapedRune for a rune that is not printable.
void AppendEscaped(int32_t r, std::string* out) {
  static constexpr absl::string_view kControls = "\a\b\f\n\r\t\v";
  static constexpr absl::string_view kLetters = "abfnrtv";
  if (size_t k = kControls.find(static_cast<char>(r));
      r < 0x80 && k != absl::string_view::npos) {
    *out += '\\';
    *out += kLetters[k];
  } else if (r < ' ' || r == 0x7F) {
    *out += "\\x";
    AppendHex(static_cast<uint32_t>(r), 2, out);
  } else if (r < 0x10000) {
    *out += "\\u";
    AppendHex(static_cast<uint32_t>(r), 4, out);
  } else {
    *out += "\\U";
    AppendHex(static_cast<uint32_t>(r), 8, out);
  }
}

}  // namespace

std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    size_t width = 1;
    const int32_t r = DecodeRune(s, i, &width);
    if (r < 0) {
      out += "\\x";
      AppendHex(static_cast<unsigned char>(s[i]), 2, &out);
    } else if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if ((r >= ' ' && r < 0x7F) || (r >= 0x80 && PrintableNonAscii(r))) {
      out.append(s.data() + i, width);
    } else {
      AppendEscaped(r, &out);
    }
    i += width;
  }
  out += '"';
  return out;
}

absl::StatusOr<std::string> ParsePath(absl::string_view raw) {
  const size_t hash = raw.find('#');
  const absl::string_view u = raw.substr(0, hash);
  absl::StatusOr<std::string> path = ParseNoFragment(u);
  if (!path.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("parse ", Quote(u), ": ", path.status().message()));
  }
  if (hash == absl::string_view::npos || hash + 1 == raw.size()) return path;
  if (absl::Status s = Unescape(raw.substr(hash + 1), Mode::kFragment).status();
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("parse ", Quote(raw), ": ", s.message()));
  }
  return path;
}

}  // namespace kscore::cache::go_url
