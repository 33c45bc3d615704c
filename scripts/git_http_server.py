#!/usr/bin/env python3
"""git's smart HTTP server as a web server runs it: each request runs `git http-backend` as a
CGI program. Threaded; on SIGTERM it stops accepting, waits for the requests in flight and
prints its own CPU time as JSON on stderr. Used by the HTTP benchmark and by the tests that
fetch from git's own HTTP server.

    python3 scripts/git_http_server.py <port file> <project root> <git> [<cert> <key>]

The chosen port is written to <port file> once the server listens. With a certificate and its
key (PEM files) it serves https.

For tests of what clients do at the HTTP level, three gates can be set in the environment:
SLUICE_TEST_HTTP_AUTH=<user>:<password> answers 401 to a request without these Basic
credentials (and passes the user on as REMOTE_USER); SLUICE_TEST_HTTP_HEADER='<Name>: <value>' answers 403 to one without that header;
and any path under /moved/ is redirected (301) to the same path without it.
SLUICE_TEST_HTTP_LOG=<file> appends one JSON line per request: method, path, status, and the
User-Agent, Git-Protocol and Content-Encoding headers.
"""

import base64

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading


def cgi_front_end(port_file, root, git, cert=None, key=None):
    """The git side's web server: each request runs `git http-backend` as a CGI program."""
    import http.server

    auth = os.environ.get("SLUICE_TEST_HTTP_AUTH")
    required = os.environ.get("SLUICE_TEST_HTTP_HEADER")
    log_path = os.environ.get("SLUICE_TEST_HTTP_LOG")
    log_lock = threading.Lock()
    scheme = "https" if cert else "http"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection does

        def log_message(self, *args):
            pass

        def log(self, status):
            if not log_path:
                return
            line = json.dumps({"method": self.command, "path": self.path, "status": status,
                               "agent": self.headers.get("User-Agent", ""),
                               "git_protocol": self.headers.get("Git-Protocol", ""),
                               "content_encoding": self.headers.get("Content-Encoding", "")})
            with log_lock, open(log_path, "a") as f:
                f.write(line + "\n")

        def gate(self):
            """The status and headers a test gate answers with, or None to serve."""
            if self.path.startswith("/moved/"):
                location = f"{scheme}://{self.headers.get('Host')}{self.path[len('/moved'):]}"
                return 301, [("Location", location)]
            if auth:
                expected = "Basic " + base64.b64encode(auth.encode()).decode()
                if self.headers.get("Authorization") != expected:
                    return 401, [("WWW-Authenticate", 'Basic realm="sluice test"')]
            if required:
                name, _, value = required.partition(":")
                if self.headers.get(name.strip()) != value.strip():
                    return 403, []
            return None

        def run_backend(self):
            refused = self.gate()
            self.log(refused[0] if refused else 200)
            if refused:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(refused[0])
                for name, value in refused[1]:
                    self.send_header(name, value)
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1",
                       REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                       REMOTE_ADDR="127.0.0.1",
                       CONTENT_TYPE=self.headers.get("Content-Type", ""))
            for header, var in [("Git-Protocol", "GIT_PROTOCOL"),
                                ("Content-Encoding", "HTTP_CONTENT_ENCODING")]:
                if self.headers.get(header):
                    env[var] = self.headers[header]
            if auth:
                # The web server authenticated the user: http-backend then serves receive-pack.
                env["REMOTE_USER"] = auth.partition(":")[0]
            length = int(self.headers.get("Content-Length") or 0)
            chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
            if length:
                env["CONTENT_LENGTH"] = str(length)
            proc = subprocess.Popen([git, "http-backend"], env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE)

            def feed():
                # A chunked body (git's pushes above http.postBuffer) is passed on as it
                # comes, without CONTENT_LENGTH: http-backend then reads to the end.
                try:
                    if chunked:
                        while True:
                            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                            if size == 0:
                                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                    pass
                                break
                            proc.stdin.write(self.rfile.read(size))
                            self.rfile.readline()
                    elif length:
                        proc.stdin.write(self.rfile.read(length))
                except BrokenPipeError:
                    pass
                finally:
                    try:
                        proc.stdin.close()
                    except BrokenPipeError:
                        pass
            feeder = threading.Thread(target=feed)
            feeder.start()
            status, headers = "200 OK", []
            while True:
                line = proc.stdout.readline().decode().rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = value.strip()
                else:
                    headers.append((name, value.strip()))
            code, _, reason = status.partition(" ")
            self.send_response(int(code), reason)
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            shutil.copyfileobj(proc.stdout, self.wfile, 1 << 16)
            feeder.join()
            proc.wait()

        do_GET = run_backend
        do_POST = run_backend

        def finish(self):
            super().finish()
            # Over TLS the body ends with the connection: without close_notify, clients
            # (git's GnuTLS) take it as cut short.
            if hasattr(self.connection, "unwrap"):
                try:
                    self.connection.unwrap()
                except OSError:
                    pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = False
    if cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        # The handshake runs in the request's thread, so a client that never completes one
        # holds up no other.
        server.socket = context.wrap_socket(server.socket, server_side=True,
                                            do_handshake_on_connect=False)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
    server.server_close()  # joins the request threads, so every backend has been waited for
    own = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"front_end_cpu": own.ru_utime + own.ru_stime}), file=sys.stderr)


if __name__ == "__main__":
    cgi_front_end(*sys.argv[1:6])
