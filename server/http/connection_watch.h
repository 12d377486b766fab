// Whether the client of a request still being handled has gone away.
#ifndef TANDEM_SERVER_HTTP_CONNECTION_WATCH_H_
#define TANDEM_SERVER_HTTP_CONNECTION_WATCH_H_

#include <httplib.h>

namespace tandem {

// httplib (0.11) tells a handler nothing of its connection: a streaming
// response learns of a closed one when a write fails, but a handler that
// waits before it answers (a whole, non-streamed completion) would wait for
// a client that left. A ConnectionWatch finds the request's socket among
// the process's (by its local and remote address and port, which name one
// TCP connection) and reports when the peer has closed it.
//
// Ownership: borrows the socket, which httplib keeps open while the handler
// runs. Threading: use it on the handler's thread, while it runs.
class ConnectionWatch {
 public:
  explicit ConnectionWatch(const httplib::Request& request);

  // Whether the request's socket was found (it is not for a request made up
  // without one); an unfound watch never reports a close.
  bool found() const { return fd_ >= 0; }
  // True once the peer has closed or reset the connection (end of stream,
  // hang-up or error); never blocks, never reads. Bytes the client sent
  // after its request (pipelining) do not count as a close; a client that
  // half-closes (shuts down its sending side) after its request does, as
  // nginx counts it.
  bool PeerClosed() const;
  // Ends the connection both ways (what was written is still sent), so that
  // httplib's next read on it fails and it closes the socket.
  void ShutDown() const;

 private:
  int fd_ = -1;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_CONNECTION_WATCH_H_
