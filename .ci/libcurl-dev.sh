# Sourced by .ci/static-binary.sh and .ci/install-cli.sh (after they define `step` and `scratch`).
# courier links CourierURLSession, so FoundationNetworking's static library, which needs
# libcurl at link time (its .so, from libcurl4-openssl-dev on Debian) and at run time (libcurl4).
if [ "$(clang -print-file-name=libcurl.so)" = libcurl.so ] && command -v apt-get >"$scratch/apt.path"; then
  step "libcurl4-openssl-dev, for linking FoundationNetworking statically"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcurl4-openssl-dev
fi
