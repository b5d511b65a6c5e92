"""An HTTP/2-only server over TLS, on python-h2: ALPN offers `h2` alone, and every connection
speaks HTTP/2 whatever the client offered (as gRPC servers and Apple's push service do).
Every request is answered once its body has ended with JSON: method, path, bytes, sha256.
Usage: h2only_server.py CERT KEY PORTFILE (writes the chosen port, then serves until killed)."""
import hashlib, json, socket, ssl, sys, threading
import h2.config, h2.connection, h2.events


def serve(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams = {}
    try:
        while (data := sock.recv(65536)):
            try:
                events = conn.receive_data(data)
            except h2.exceptions.ProtocolError:  # an HTTP/1.1 client: GOAWAY, then close
                sock.sendall(conn.data_to_send())
                return
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    headers = dict((k.decode(), v.decode()) for k, v in event.headers)
                    streams[event.stream_id] = (headers, hashlib.sha256(), [0])
                elif isinstance(event, h2.events.DataReceived):
                    _, digest, count = streams[event.stream_id]
                    digest.update(event.data)
                    count[0] += len(event.data)
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers, digest, count = streams.pop(event.stream_id)
                    body = json.dumps({"method": headers[":method"], "path": headers[":path"],
                                       "bytes": count[0], "sha256": digest.hexdigest()}).encode()
                    conn.send_headers(event.stream_id, [(":status", "200"), ("content-type", "application/json"),
                                                        ("content-length", str(len(body)))])
                    conn.send_data(event.stream_id, body, end_stream=True)
            sock.sendall(conn.data_to_send())
    except (OSError, KeyError):
        pass
    finally:
        sock.close()


def main():
    cert, key, portfile = sys.argv[1:4]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    listener = socket.create_server(("127.0.0.1", 0))
    with open(portfile, "w") as f:
        f.write(str(listener.getsockname()[1]))
    while True:
        client, _ = listener.accept()
        try:
            tls = context.wrap_socket(client, server_side=True)
        except (OSError, ssl.SSLError):
            client.close()
            continue
        threading.Thread(target=serve, args=(tls,), daemon=True).start()


if __name__ == "__main__":
    main()
