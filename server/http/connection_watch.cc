#include "server/http/connection_watch.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <string>

namespace tandem {
namespace {

// The numeric host and the port of `address`, as httplib writes them.
bool Describe(const sockaddr_storage& address, socklen_t length, std::string* host, int* port) {
  char name[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, name, sizeof(name),
                    service, sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  *host = name;
  *port = std::atoi(service);
  return true;
}

// Whether `fd` is a socket connected from (local_host, local_port) to
// (remote_host, remote_port). The peer is compared first: every HTTP
// connection shares the local address, the peer's port tells them apart.
bool IsConnection(int fd, const httplib::Request& request) {
  const auto matches = [fd](decltype(::getsockname) query, const std::string& want_host,
                            int want_port) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    std::string host;
    int port = -1;
    return query(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
           Describe(address, length, &host, &port) && port == want_port && host == want_host;
  };
  return matches(::getpeername, request.remote_addr, request.remote_port) &&
         matches(::getsockname, request.local_addr, request.local_port);
}

}  // namespace

ConnectionWatch::ConnectionWatch(const httplib::Request& request) {
  if (request.local_port <= 0 || request.remote_port <= 0) return;
  DIR* fds = ::opendir("/proc/self/fd");
  if (fds == nullptr) return;
  const int own = ::dirfd(fds);
  while (const dirent* entry = ::readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    if (IsConnection(static_cast<int>(fd), request)) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(fds);
}

void ConnectionWatch::ShutDown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

bool ConnectionWatch::PeerClosed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace tandem
