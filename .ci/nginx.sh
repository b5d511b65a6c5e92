#!/usr/bin/env bash
# Starts Debian's nginx (nginx-light) on loopback for the interop suite: one server over TLS with
# HTTP/2 that retires each connection after 50 streams (as large frontends do), answers /echo
# before reading the body and /limited with 413 for a declared body over 1 KiB, and one over
# plain HTTP/1.1 with a 1 s keep-alive timeout and 3 requests per connection; both gzip what they
# serve under /gz/; and one over plain HTTP/1.1 for split downloads, whose /limited/ caps each
# connection at 20 MB/s (`limit_rate 20m`, as object stores and CDNs cap them) and whose
# /noranges/ also ignores Range (`max_ranges 0`), both serving DIR/www, with each request's bytes
# in DIR/logs/split.log. Prints `export` lines for the tests (eval them); installs nginx-light
# and openssl with apt-get when missing. Stop it with `kill "$(cat $DIR/nginx.pid)"`.
set -euo pipefail
if ! command -v nginx >/dev/null; then
  apt-get update -qq >&2 && apt-get install -y -qq nginx-light >&2
fi
dir=$(mktemp -d /tmp/courier-nginx.XXXXXX)
mkdir -p "$dir/www" "$dir/logs" "$dir/body"
# Workers run as an unprivileged user: they must be able to read the files served.
chmod 755 "$dir" "$dir/www"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 \
  -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
# A fixed pattern, so the tests know every byte: 2,048 bytes of "0123456789abcdef" repeated.
printf '0123456789abcdef%.0s' $(seq 1 128) > "$dir/www/small.bin"
# Text that nginx gzips on the fly under /gz/ (about 3.6 MB), for decoding by an encoder that
# is not Courier's own test server.
mkdir -p "$dir/www/gz"
chmod 755 "$dir/www/gz"
seq 1 100000 | sed 's/$/ courier decodes what nginx gzipped/' > "$dir/www/gz/lines.txt"
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
h2_port=$(free_port)
h1_port=$(free_port)
split_port=$(free_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  log_format proto '\$server_protocol \$request_method \$uri \$status';
  access_log $dir/logs/access.log proto;
  client_body_temp_path $dir/body;
  server {
    listen 127.0.0.1:$h2_port ssl http2;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    keepalive_requests 50;
    client_max_body_size 0;
    root $dir/www;
    location /echo { return 200 "ok\n"; }
    location /limited { client_max_body_size 1k; return 200 "ok\n"; }
    location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 0; }
  }
  server {
    listen 127.0.0.1:$h1_port;
    keepalive_timeout 1s;
    keepalive_requests 3;
    client_max_body_size 0;
    root $dir/www;
    location /echo { return 200 "ok\n"; }
    location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 0; }
  }
  log_format split '\$request_method \$uri \$status \$body_bytes_sent "\$http_range"';
  server {
    listen 127.0.0.1:$split_port;
    access_log $dir/logs/split.log split;
    root $dir/www;
    location /limited/ { alias $dir/www/; limit_rate 20m; }
    location /noranges/ { alias $dir/www/; limit_rate 20m; max_ranges 0; }
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir" >&2
for _ in $(seq 1 50); do
  curl -fsS --cacert "$dir/cert.pem" "https://localhost:$h2_port/echo" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS --cacert "$dir/cert.pem" "https://localhost:$h2_port/echo" >/dev/null
echo "export COURIER_NGINX_DIR='$dir'"
echo "export COURIER_NGINX_H2_URL='https://localhost:$h2_port'"
echo "export COURIER_NGINX_H1_URL='http://127.0.0.1:$h1_port'"
echo "export COURIER_NGINX_CA='$dir/cert.pem'"
echo "export COURIER_NGINX_ACCESS_LOG='$dir/logs/access.log'"
echo "export COURIER_NGINX_SPLIT_URL='http://127.0.0.1:$split_port'"
echo "export COURIER_NGINX_SPLIT_LOG='$dir/logs/split.log'"
