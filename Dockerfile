# Windlass in a container: `docker build -t windlass .`
#
# Stage 1 builds the release binary; stage 2 is a slim Debian with the
# binary, CA certificates, curl (for HEALTHCHECK) and bubblewrap (the
# built-in `shell` tool's sandbox), run as a non-root user. The SQLite
# database lives on the /var/lib/windlass volume. Inside the container the
# server listens on 0.0.0.0:8080; publish it on the host as you choose
# (e.g. `-p 127.0.0.1:8080:8080`).

FROM rust:1.89-slim-bookworm AS build
WORKDIR /src
# Only what the build reads (see .dockerignore).
COPY Cargo.toml Cargo.lock rustfmt.toml README.md ./
COPY crates ./crates
RUN cargo build --release --locked -p windlass-cli --bin windlass \
    && strip target/release/windlass

FROM debian:bookworm-slim
# Unpinned on purpose: Debian stable only ships security fixes, and pinned
# versions disappear from the mirror, breaking rebuilds.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/windlass --shell /usr/sbin/nologin windlass \
    && mkdir -p /var/lib/windlass /etc/windlass \
    && chown windlass:windlass /var/lib/windlass
COPY --from=build /src/target/release/windlass /usr/local/bin/windlass
COPY windlass.example.toml /etc/windlass/windlass.example.toml

# Every setting can also come from WINDLASS_SECTION__KEY variables; mount a
# config at /etc/windlass/windlass.toml and set WINDLASS_CONFIG to use one.
ENV WINDLASS_LISTEN=0.0.0.0:8080 \
    WINDLASS_DB=/var/lib/windlass/windlass.db \
    WINDLASS_LOG_FORMAT=json
VOLUME ["/var/lib/windlass"]
USER 10001:10001
WORKDIR /var/lib/windlass
EXPOSE 8080
# SIGTERM drains: /ready turns 503, running responses get
# [server] shutdown_grace_secs (30 s) to finish. Give `docker stop` more:
# `docker stop -t 60`.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/health"]
ENTRYPOINT ["windlass"]
CMD ["serve"]
