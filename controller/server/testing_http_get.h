// HttpGet: a test helper that sends one plain HTTP/1.0 GET to 127.0.0.1:port and returns the raw
// response (status line, headers and body), or "connect failed". For tests of the HTTP servers
// and the probe routes; not for production code.
#pragma once

#include <unistd.h>

#include <array>
#include <cstdint>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace draco::server::testing {

inline std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string out;
  std::array<char, 4096> buf{};
  ssize_t n = 0;
  while ((n = read(fd, buf.data(), buf.size())) > 0) out.append(buf.data(), static_cast<size_t>(n));
  close(fd);
  return out;
}

}  // namespace draco::server::testing
