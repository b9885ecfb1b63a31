# shellcheck shell=bash
# Sourced by scripts/jaeger.sh and scripts/test.sh: the pinned Jaeger (v2, built on the OpenTelemetry
# Collector) as the OTLP receiver the tracing test and the tracing benchmark send spans to, and whose
# query API they read them back from (docs/operations.md, "Traces"). Built once from the Go module
# proxy into the tools cache (~/.cache/pda-tools, or $PDA_TOOLS_CACHE); a second call is instant.
# Only the Go module proxy is contacted, by the machine's `go`.

JAEGER_VERSION=v1.76.0

# ensure_jaeger → prints the path of the `jaeger` executable (messages go to stderr).
ensure_jaeger() {
  local cache="${PDA_TOOLS_CACHE:-$HOME/.cache/pda-tools}"
  local dir="$cache/jaeger-$JAEGER_VERSION"
  local bin="$dir/jaeger"
  if [ -x "$bin" ]; then
    echo "$bin"
    return 0
  fi
  # The machine's Go may be installed outside PATH (the official tarball's /usr/local/go).
  if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
  if ! command -v go >/dev/null; then
    echo "jaeger: the Go toolchain is required to build Jaeger (go version 1.26 or newer)" >&2
    return 1
  fi
  echo "jaeger: building github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION from the Go module proxy (once, several minutes)" >&2
  local work log
  work=$(mktemp -d)
  log="$work/build.log"
  # A throwaway module names Jaeger as a tool (its go.mod pins every dependency it was released with);
  # GOFLAGS=-mod=mod lets `go get` write go.sum. The module cache stays in Go's own cache for reruns.
  if ! (
    cd "$work" &&
      go mod init pda-jaeger-build &&
      go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" &&
      mkdir -p "$dir" &&
      CGO_ENABLED=0 go build -trimpath -o "$dir/jaeger.partial" github.com/jaegertracing/jaeger/cmd/jaeger
  ) >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "jaeger: could not build Jaeger $JAEGER_VERSION (log above)" >&2
    rm -rf "$work"
    return 1
  fi
  mv "$dir/jaeger.partial" "$bin"
  rm -rf "$work"
  echo "$bin"
}
