"""A real OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces`
(protobuf `ExportTraceServiceRequest`, decoded with the `opentelemetry-proto`
package) and keeps every span it got."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class Span:
    def __init__(self, span, resource_attrs):
        self.name = span.name
        self.trace_id = span.trace_id.hex()
        self.span_id = span.span_id.hex()
        self.parent_span_id = span.parent_span_id.hex()
        self.attrs = {a.key: _value(a.value) for a in span.attributes}
        self.resource = resource_attrs

    def __repr__(self):
        return f"Span({self.name} {self.trace_id}/{self.span_id}<-{self.parent_span_id} {self.attrs})"


def _value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Receiver:
    def __init__(self):
        self.spans = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                req = trace_service_pb2.ExportTraceServiceRequest()
                req.ParseFromString(body)
                got = []
                for rs in req.resource_spans:
                    res = {a.key: _value(a.value) for a in rs.resource.attributes}
                    for ss in rs.scope_spans:
                        got.extend(Span(s, res) for s in ss.spans)
                with receiver.lock:
                    receiver.spans.extend(got)
                out = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, predicate, timeout=30.0):
        """Spans once `predicate(spans)` holds; fails after `timeout`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                spans = list(self.spans)
            if predicate(spans):
                return spans
            time.sleep(0.1)
        raise AssertionError(f"spans never matched; got {spans}")

    def close(self):
        self.server.shutdown()
        self.server.server_close()
